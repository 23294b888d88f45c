// Dollars per merged PR: what the runs whose PR `pr-check` saw merged cost, in all and per PR (for `status --all`).
import { cachedCostSummary } from '../cost/status-snapshot.ts'
import { configOf } from '../run-access.ts'
import { mergedAt } from '../run-queries.ts'
import type { RunState } from '../state.ts'

export async function mergedPrCosts(runs: RunState[]) {
  const merged = runs.filter((run) => mergedAt(run) !== null)
  const costs = await Promise.all(
    merged.map(async (run) => {
      const cost = await cachedCostSummary(run, () => configOf(run))
      return { run_id: run.run_id, pr: run.pr, merged_at: mergedAt(run), cost_usd: cost.total_usd }
    }),
  )
  const total = costs.reduce((sum, entry) => sum + entry.cost_usd, 0)
  return {
    count: costs.length,
    total_usd: total,
    usd_per_merged_pr: costs.length ? total / costs.length : null,
    runs: costs,
  }
}
