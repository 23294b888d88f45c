// A run's findings as reviewdog diagnostics (rdjsonl: one JSON object per line) for inline PR comments.
// Only findings with a path can be placed on a line; the rest are counted as skipped.
import { formatFindingLine } from '../run/handoff.ts'
import { allFindings } from '../run/run-queries.ts'
import type { Finding, RunState } from '../run/state.ts'
import { cleanText, repoPath } from './sarif.ts'

type Severity = 'ERROR' | 'WARNING' | 'INFO'

export const SEVERITIES: Record<NonNullable<Finding['severity']> | 'none', Severity> = {
  blocker: 'ERROR',
  major: 'ERROR',
  minor: 'WARNING',
  nit: 'INFO',
  none: 'WARNING',
}

/** `sourceUrl`: the project's page, or null to leave `source.url` out (it is optional; a wrong one is worse). */
export function toRdjsonl(run: RunState, sourceUrl: string | null): { text: string; skipped: string[] } {
  const lines: string[] = []
  const skipped: string[] = []
  for (const finding of allFindings(run)) {
    if (!finding.path) {
      skipped.push(finding.id)
      continue
    }
    const start = finding.line_start ?? 0
    // line-only ranges are line-wise and include the end line (reviewdog's Range)
    const range =
      start >= 1 ? { range: { start: { line: start }, end: { line: Math.max(start, finding.line_end ?? start) } } } : {}
    lines.push(
      JSON.stringify({
        message: cleanText(finding.text) || `${finding.category} finding ${finding.id}`,
        location: { path: repoPath(run.repo, finding.path).path, ...range },
        severity: SEVERITIES[finding.severity ?? 'none'],
        source: { name: 'pair-loop', ...(sourceUrl ? { url: sourceUrl } : {}) },
        code: { value: finding.category },
        original_output: formatFindingLine(finding),
      }),
    )
  }
  return { text: lines.map((line) => `${line}\n`).join(''), skipped }
}
