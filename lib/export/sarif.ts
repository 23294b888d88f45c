// A run's findings as a SARIF 2.1.0 log (GitHub code scanning, IDEs): one rule per category, stable fingerprints,
// won't-fix findings as suppressions carrying the coder's reply. Pure and deterministic: same state, same bytes.
import { isAbsolute, posix, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { stripControl } from '../ground/text.ts'
import { allFindings } from '../run/run-queries.ts'
import type { Finding, ReviewerRound, RunState } from '../run/state.ts'

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json'
export const FINGERPRINT = 'pairLoop/v1'
const SRCROOT = '%SRCROOT%'

export interface ToolInfo {
  version: string
  /** The project's page, or null to leave it out (optional in SARIF). */
  informationUri: string | null
}

type Level = 'error' | 'warning' | 'note'

export const LEVELS: Record<NonNullable<Finding['severity']> | 'none', Level> = {
  blocker: 'error',
  major: 'error',
  minor: 'warning',
  nit: 'note',
  none: 'warning',
}

export const levelOf = (finding: Pick<Finding, 'severity'>): Level => LEVELS[finding.severity ?? 'none']

export const ruleId = (category: string) => `pair-loop/${category}`

/** Where a finding points, as the repository sees it: repo-relative POSIX path, or absolute when it lies outside. */
export function repoPath(repo: string, path: string): { path: string; inside: boolean } {
  const slashed = path.replace(/\\/g, '/')
  if (isAbsolute(slashed)) {
    const rel = relative(repo, slashed).replace(/\\/g, '/')
    return rel && !rel.startsWith('../') && rel !== '..' && !isAbsolute(rel)
      ? { path: rel, inside: true }
      : { path: slashed, inside: false }
  }
  const normal = posix.normalize(slashed).replace(/^(\.\/)+/, '')
  return { path: normal, inside: true }
}

/** The run was approved: finished as APPROVED, or its latest review approved it. */
export const isApproved = (run: RunState) =>
  run.outcome ? run.outcome.verdict === 'APPROVED' : run.phase === 'approved'

/** Agent text for another tool: control characters and ANSI escapes dropped, line breaks kept. */
export const cleanText = (text: string) => stripControl(text).trim()

export function toSarif(run: RunState, tool: ToolInfo) {
  const reviewers = new Map<string, ReviewerRound>()
  for (const round of run.rounds)
    if (round.reviewer) for (const f of round.reviewer.findings) reviewers.set(f.id, round.reviewer)
  const findings = allFindings(run)
  const categories = [...new Set(findings.map((f) => f.category))].sort()
  const rules = categories.map((category) => ({
    id: ruleId(category),
    name: category,
    shortDescription: { text: `pair-loop reviewer finding: ${category}` },
    properties: { tags: ['pair-loop', 'code-review', category] },
  }))
  const results = findings.map((finding) => {
    const reply = run.replies[finding.id] ?? null
    return {
      ruleId: ruleId(finding.category),
      ruleIndex: categories.indexOf(finding.category),
      level: levelOf(finding),
      message: { text: cleanText(finding.text) || `${finding.category} finding ${finding.id}` },
      ...(finding.path ? { locations: [location(run.repo, finding)] } : {}),
      partialFingerprints: { [FINGERPRINT]: finding.key },
      properties: {
        id: finding.id,
        round: finding.round,
        severity: finding.severity,
        recurring: finding.recurring,
        recurring_of: finding.recurring_of,
        reviewer_tool: reviewers.get(finding.id)?.tool ?? null,
        disposition: reply?.disposition ?? null,
      },
      suppressions:
        reply?.disposition === 'wont-fix'
          ? [
              {
                kind: 'external',
                status: isApproved(run) ? 'accepted' : 'underReview',
                justification: cleanText(reply.body),
              },
            ]
          : [],
    }
  })
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'pair-loop',
            version: tool.version,
            ...(tool.informationUri ? { informationUri: tool.informationUri } : {}),
            rules,
          },
        },
        automationDetails: { id: `pair-loop/${run.run_id}/` },
        originalUriBaseIds: { [SRCROOT]: { uri: `${pathToFileURL(run.repo).href.replace(/\/$/, '')}/` } },
        results,
        properties: { run_id: run.run_id, branch: run.branch, base_sha: run.base_sha, phase: run.phase },
      },
    ],
  }
}

function location(repo: string, finding: Finding) {
  const where = repoPath(repo, finding.path!)
  const artifactLocation = where.inside
    ? { uri: where.path.split('/').map(encodeURIComponent).join('/'), uriBaseId: SRCROOT }
    : { uri: pathToFileURL(where.path).href }
  const start = finding.line_start ?? 0
  const region = start >= 1 ? { startLine: start, endLine: Math.max(start, finding.line_end ?? start) } : undefined
  return { physicalLocation: { artifactLocation, ...(region ? { region } : {}) } }
}
