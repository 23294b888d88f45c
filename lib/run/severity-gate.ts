// The severity gate (DESIGN "Severity gate", `pair_loop.block_on`): findings below the gate are shown and answerable,
// but never keep a round from counting as approved. `nit`, the default, has nothing below it: every finding blocks.
// Structural types only: config.ts and state.ts both read this module, and neither may be read by it.

/** Most severe first: a finding blocks when it is at the gate or above it. */
export const SEVERITIES = ['blocker', 'major', 'minor', 'nit'] as const
export type Severity = (typeof SEVERITIES)[number]

/** Who made a round count as approved: the reviewer's own APPROVED, or the gate's rule over its findings. */
export const APPROVERS = ['reviewer', 'severity_gate'] as const
export type Approver = (typeof APPROVERS)[number]

/** The gate every run had before there was one: every finding blocks. */
export const DEFAULT_BLOCK_ON: Severity = 'nit'

const rank = (severity: Severity) => SEVERITIES.indexOf(severity)

/** A finding keeps the round from approval: at the gate or above, or of no severity the reviewer stated (never guessed). */
export const blocks = (severity: Severity | null, blockOn: Severity): boolean =>
  severity === null || rank(severity) <= rank(blockOn)

/**
 * Who approves a review: the reviewer when it said APPROVED; the gate when it asked for changes with findings that are
 * all below `blockOn` (none at all is not "all below": its reasons are in its prose); else nobody (null).
 */
export function approverOf(
  review: { verdict: 'APPROVED' | 'CHANGES_REQUESTED'; findings: ReadonlyArray<{ severity: Severity | null }> },
  blockOn: Severity,
): Approver | null {
  if (review.verdict === 'APPROVED') return 'reviewer'
  const below = review.findings.length > 0 && review.findings.every((finding) => !blocks(finding.severity, blockOn))
  return below ? 'severity_gate' : null
}

/** A gate a repository's file asks for lets through findings the person's (or the default) would block. */
export const loosens = (asked: Severity | undefined, personal: Severity | undefined): boolean =>
  asked !== undefined && rank(asked) < rank(personal ?? DEFAULT_BLOCK_ON)

/** The one sentence every place that shows a gate's approval says (review, status, HANDOFF.md, the PR body). */
export const gateSentence = (blockOn: Severity, below: number): string =>
  `approved by the severity gate (block_on: ${blockOn}): ${below} finding${below === 1 ? '' : 's'} below it left open`
