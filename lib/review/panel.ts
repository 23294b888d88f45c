// A panel's round (DESIGN "Panel"): the approval rule over its members' verdicts, and their findings merged by key
// into one finding each, raised by every member that raised it. Pure: the conducting is lib/review/panel-round.ts.
import { findingKey, type ParsedFinding } from '../run/grammar.ts'
import type { PanelMember, Verdict } from '../run/state.ts'
import type { ReviewerTool } from '../run/vendors.ts'

export type Approval = { rule: 'all' } | { rule: 'any' } | { rule: 'quorum'; n: number }

/** `all`, `any` or `quorum:N`, as config's schema checked it. */
export function parseApproval(text: string): Approval {
  if (text === 'any') return { rule: 'any' }
  const quorum = /^quorum:(\d+)$/.exec(text)
  return quorum ? { rule: 'quorum', n: Number(quorum[1]) } : { rule: 'all' }
}

/** The round's verdict: APPROVED when the rule's count of approving members is met (a failed member approves nothing). */
export function panelVerdict(members: ReadonlyArray<Pick<PanelMember, 'verdict'>>, approval: Approval): Verdict {
  const approvals = members.filter((member) => member.verdict === 'APPROVED').length
  const needed = approval.rule === 'all' ? members.length : approval.rule === 'any' ? 1 : approval.n
  return approvals >= needed ? 'APPROVED' : 'CHANGES_REQUESTED'
}

/**
 * Every member's findings, one per key (category, path, normalised text), in the order first raised, numbered anew;
 * `raised_by` names each member that raised it. The most severe of the severities said is kept (a blocker of one
 * member is not made a nit by another's word).
 */
export function mergeFindings(byMember: ReadonlyArray<{ tool: ReviewerTool; findings: ParsedFinding[] }>) {
  const merged = new Map<string, ParsedFinding & { raised_by: ReviewerTool[] }>()
  for (const { tool, findings } of byMember) {
    for (const finding of findings) {
      const key = findingKey(finding)
      const known = merged.get(key)
      if (!known) merged.set(key, { ...finding, raised_by: [tool] })
      else {
        if (!known.raised_by.includes(tool)) known.raised_by.push(tool)
        if (moreSevere(finding.severity, known.severity)) known.severity = finding.severity
      }
    }
  }
  return [...merged.values()].map((finding, index) => ({ ...finding, n: index + 1 }))
}

const ORDER = ['blocker', 'major', 'minor', 'nit'] as const
/** A stated severity above another (none stated ranks as the most severe: it blocks under every gate). */
const moreSevere = (a: ParsedFinding['severity'], b: ParsedFinding['severity']): boolean =>
  b !== null && (a === null || ORDER.indexOf(a) < ORDER.indexOf(b))
