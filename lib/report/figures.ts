// The figures a person compares runs by: rounds to approval, approval rate, dollars per approved run and per merged PR.
// One definition of each, here: the report and `status --all` both count with summarise().
import { mergedAt } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import { roundApproved } from '../run/gated-review.ts'

/** A run's loop has ended once it was approved, capped or finished; before that its figures are still moving. */
export const hasEnded = (run: RunState) => run.phase !== 'coding' && run.phase !== 'reviewing'

/** Approved: waiting to ship after an approving review, or finished as APPROVED (an approval then abandoned is not). */
export const isApproved = (run: RunState) =>
  run.outcome ? run.outcome.verdict === 'APPROVED' : run.phase === 'approved'

/**
 * Reviewed by the other vendor: no review fell back to (or was by) the coder's own CLI. The figures that compare
 * pair-loop's cross-vendor reviews count these runs only; the others are counted apart.
 */
export const isCrossVendor = (run: RunState) =>
  !run.reviewer_fallback &&
  !run.rounds.some((round) => round.reviewer && (round.reviewer.fallback_used || round.reviewer.tool === run.coder))

export interface RunFigures {
  run_id: string
  ended: boolean
  /** The run is approved (see isApproved). */
  approved: boolean
  /** The round of the approving review, for an approved run only. */
  rounds_to_approval: number | null
  merged: boolean
  cross_vendor: boolean
  /** What the run cost (`budget-check`'s spent), null when it could not be measured at all. */
  spent: number | null
  /** Every figure of the run is a measurement (no role or round without records, every model priced). */
  measured: boolean
}

export function runFigures(run: RunState, cost: { spent: number | null; measured: boolean }): RunFigures {
  const approved = isApproved(run)
  const approving = approved
    ? run.rounds.findLast((round) => round.reviewer !== null && roundApproved(round.reviewer))
    : undefined
  return {
    run_id: run.run_id,
    ended: hasEnded(run),
    approved,
    rounds_to_approval: approving?.n ?? null,
    merged: mergedAt(run) !== null,
    cross_vendor: isCrossVendor(run),
    spent: cost.spent,
    measured: cost.spent !== null && cost.measured,
  }
}

export interface Summary {
  runs: number
  /** Cross-vendor runs whose loop has ended: the ones the rates and the dollars per outcome count. */
  ended: number
  approved: number
  merged: number
  /** approved / ended; null before any run ended. */
  approval_rate: number | null
  mean_rounds_to_approval: number | null
  /** Every run's measured spend, open and same-vendor runs included. */
  spent: number
  /** The ended runs' spend, approved or not, divided by the approved (or merged) ones: what one approval costs. */
  usd_per_approved: number | null
  usd_per_merged: number | null
  /** Runs with a figure that is not a measurement (their measured part is in the sums; the totals may be low). */
  unmeasured: number
  /** Of them, the ended runs the per-approved and per-merged figures divide (those figures may be low too). */
  ended_unmeasured: number
  /** Runs reviewed by the coder's own vendor (a fallback): counted here, in `spent`, and nowhere else. */
  same_vendor: { runs: number; ended: number; approved: number; spent: number }
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

export function summarise(figures: RunFigures[]): Summary {
  const cross = figures.filter((f) => f.cross_vendor)
  const same = figures.filter((f) => !f.cross_vendor)
  const ended = cross.filter((f) => f.ended)
  const approved = ended.filter((f) => f.approved)
  const endedSpend = sum(ended.map((f) => f.spent ?? 0))
  return {
    runs: figures.length,
    ended: ended.length,
    approved: approved.length,
    merged: ended.filter((f) => f.merged).length,
    approval_rate: ended.length ? approved.length / ended.length : null,
    mean_rounds_to_approval: approved.length ? sum(approved.map((f) => f.rounds_to_approval!)) / approved.length : null,
    spent: sum(figures.map((f) => f.spent ?? 0)),
    usd_per_approved: approved.length ? endedSpend / approved.length : null,
    usd_per_merged: usdPerMergedPr(figures),
    unmeasured: figures.filter((f) => !f.measured).length,
    ended_unmeasured: ended.filter((f) => !f.measured).length,
    same_vendor: {
      runs: same.length,
      ended: same.filter((f) => f.ended).length,
      approved: same.filter((f) => f.ended && f.approved).length,
      spent: sum(same.map((f) => f.spent ?? 0)),
    },
  }
}

/**
 * Dollars per merged PR, the one definition: what the ended cross-vendor runs spent, merged or not, divided by the
 * PRs merged among them (what one merged PR costs, the attempts that led nowhere included); null before any merge.
 */
export function usdPerMergedPr(figures: RunFigures[]): number | null {
  const ended = figures.filter((f) => f.cross_vendor && f.ended)
  const merged = ended.filter((f) => f.merged).length
  return merged ? sum(ended.map((f) => f.spent ?? 0)) / merged : null
}
