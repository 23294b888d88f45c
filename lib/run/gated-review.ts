// A review under the run's severity gate (lib/run/severity-gate.ts): who approved it, whether a round counts as
// approved, and the gate's approval the run stands on, as every document that shows it says it.
import { approverOf, DEFAULT_BLOCK_ON, gateSentence, type Severity } from './severity-gate.ts'
import type { Finding, ReviewerRound, RunState } from './state.ts'

/** The run's gate: its frozen config's `block_on` (a run from before the key, or without a config: nit, all block). */
export const blockOnOf = (run: Pick<RunState, 'config'>): Severity => run.config?.pair_loop.block_on ?? DEFAULT_BLOCK_ON

/** The review as recorded: who approved it by the run's gate, worked out here whatever the input said. */
export function gated(run: Pick<RunState, 'config'>, review: ReviewerRound): ReviewerRound {
  const said: ReviewerRound = { ...review }
  delete said.approved_by
  delete said.block_on
  const blockOn = blockOnOf(run)
  const approver = approverOf(said, blockOn)
  if (approver === null) return said
  return approver === 'severity_gate'
    ? { ...said, approved_by: approver, block_on: blockOn }
    : { ...said, approved_by: approver }
}

/** The round counts as approved: by the reviewer's APPROVED (a round from before `approved_by`: its verdict) or the gate. */
export const roundApproved = (review: Pick<ReviewerRound, 'verdict' | 'approved_by'>): boolean =>
  review.approved_by !== undefined || review.verdict === 'APPROVED'

export interface GateApproval {
  /** The round it approved (null: the final round on the PR). */
  round: number | null
  block_on: Severity
  /** The findings the gate let through: every finding of the review, each below the gate. */
  findings: Finding[]
  /** The sentence: "approved by the severity gate (block_on: major): 2 findings below it left open". */
  said: string
}

/** The severity gate's approval of a review, when that is what approved it (null otherwise). */
export function gateOf(review: ReviewerRound | null | undefined, round: number | null): GateApproval | null {
  if (review?.approved_by !== 'severity_gate') return null
  const blockOn = review.block_on ?? DEFAULT_BLOCK_ON
  return { round, block_on: blockOn, findings: review.findings, said: gateSentence(blockOn, review.findings.length) }
}

/** The gate's approval of the run's last review, when the gate approved it: what the run stands on now. */
export const gateApproval = (run: Pick<RunState, 'rounds'>): GateApproval | null =>
  gateOf(run.rounds.at(-1)?.reviewer, run.rounds.at(-1)?.n ?? null)

/** What a JSON document says of a gate's approval (nothing when there is none: a document as before the gate). */
export const gateFields = (gate: GateApproval | null) =>
  gate
    ? {
        approved_by: 'severity_gate' as const,
        severity_gate: {
          round: gate.round,
          block_on: gate.block_on,
          left_open: gate.findings.map((finding) => finding.id),
          said: gate.said,
        },
      }
    : {}
