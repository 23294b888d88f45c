// Where a finding points, written once for every view (status and findings --text, the report, the PR body).
import type { Finding } from './state.ts'

/** `src/a.ts:3-5`, `src/a.ts:3`, `src/a.ts`, or null for a finding about no one place. */
export function findingPlace(finding: Pick<Finding, 'path' | 'line_start' | 'line_end'>): string | null {
  if (!finding.path) return null
  if (finding.line_start === null || finding.line_start === undefined) return finding.path
  const end = finding.line_end && finding.line_end !== finding.line_start ? `-${finding.line_end}` : ''
  return `${finding.path}:${finding.line_start}${end}`
}
