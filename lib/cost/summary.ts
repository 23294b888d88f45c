// What a run has cost so far, in the shape status, finish and the PR body show.
import type { RunState } from '../state.ts'

export interface RunCostSummary {
  total_usd: number
  by_round: Record<number, number>
  by_role: { coder: number; reviewer: number }
  complete: boolean
}

/** Reviewer calls as recorded on the run (failed attempts included: they were paid for). */
export async function runCostSummary(run: RunState): Promise<RunCostSummary> {
  const by_round: Record<number, number> = {}
  let reviewer = 0
  for (const round of run.rounds) {
    const usd = round.reviewer?.cost?.usd ?? 0
    by_round[round.n] = usd
    reviewer += usd
  }
  for (const failed of run.failed_reviews) {
    const usd = failed.cost?.usd ?? 0
    by_round[failed.round] = (by_round[failed.round] ?? 0) + usd
    reviewer += usd
  }
  return { total_usd: reviewer, by_round, by_role: { coder: 0, reviewer }, complete: false }
}
