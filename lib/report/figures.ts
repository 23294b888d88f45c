// The figures a person compares runs by: rounds to approval, approval rate, dollars per approved run and per merged PR.
import { mergedAt } from '../run-queries.ts'
import type { RunState } from '../state.ts'

/** A run's loop has ended once it was approved, capped or finished; before that its figures are still moving. */
export const hasEnded = (run: RunState) => run.phase !== 'coding' && run.phase !== 'reviewing'

export interface RunFigures {
  run_id: string
  ended: boolean
  /** A review approved the run. */
  approved: boolean
  /** The round of the first approving review. */
  rounds_to_approval: number | null
  merged: boolean
  /** What the run cost (`budget-check`'s spent), null when it could not be measured. */
  spent: number | null
}

export function runFigures(run: RunState, spent: number | null): RunFigures {
  const approving = run.rounds.find((round) => round.reviewer?.verdict === 'APPROVED')
  return {
    run_id: run.run_id,
    ended: hasEnded(run),
    approved: approving !== undefined,
    rounds_to_approval: approving?.n ?? null,
    merged: mergedAt(run) !== null,
    spent,
  }
}

export interface Summary {
  runs: number
  /** Runs whose loop has ended: the ones the rates and the dollars per outcome count. */
  ended: number
  approved: number
  merged: number
  /** approved / ended; null before any run ended. */
  approval_rate: number | null
  mean_rounds_to_approval: number | null
  /** Every run's measured spend, open runs included. */
  spent: number
  /** The ended runs' spend, approved or not, divided by the approved (or merged) ones: what one approval costs. */
  usd_per_approved: number | null
  usd_per_merged: number | null
  /** Runs whose cost could not be measured (left out of the sums). */
  unmeasured: number
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

export function summarise(figures: RunFigures[]): Summary {
  const ended = figures.filter((f) => f.ended)
  const approved = ended.filter((f) => f.approved)
  const merged = ended.filter((f) => f.merged)
  const endedSpend = sum(ended.map((f) => f.spent ?? 0))
  return {
    runs: figures.length,
    ended: ended.length,
    approved: approved.length,
    merged: merged.length,
    approval_rate: ended.length ? approved.length / ended.length : null,
    mean_rounds_to_approval: approved.length ? sum(approved.map((f) => f.rounds_to_approval!)) / approved.length : null,
    spent: sum(figures.map((f) => f.spent ?? 0)),
    usd_per_approved: approved.length ? endedSpend / approved.length : null,
    usd_per_merged: merged.length ? endedSpend / merged.length : null,
    unmeasured: figures.filter((f) => f.spent === null).length,
  }
}
