// A review round's usage and cost over every reviewer call it took: a re-ask for a missing verdict is paid for too.
import type { ReviewerCost, Usage } from '../run/state.ts'

/** What one reviewer call used and cost, as the round sums it. */
export interface CallSpend {
  usage: Usage | null
  cost: ReviewerCost | null
  duration_ms: number
}

export function sumCalls(calls: CallSpend[]): CallSpend {
  let usage: Usage | null = null
  let cost: ReviewerCost | null = null
  for (const call of calls) {
    if (call.usage) usage = usage ? addUsage(usage, call.usage) : { ...call.usage }
    if (call.cost) cost = cost ? mergeCost(cost, call.cost) : { ...call.cost }
  }
  return { usage, cost, duration_ms: calls.reduce((sum, call) => sum + call.duration_ms, 0) }
}

function addUsage(a: Usage, b: Usage): Usage {
  const total = { ...a }
  for (const key of Object.keys(total) as Array<keyof Usage>) total[key] = (a[key] ?? 0) + (b[key] ?? 0)
  return total
}

/** Two calls' costs as one: USD per model added, sources joined, a figure only one call had kept. */
export function mergeCost(a: ReviewerCost, b: ReviewerCost): ReviewerCost {
  const models = { ...a.models }
  for (const [model, usd] of Object.entries(b.models ?? {})) models[model] = (models[model] ?? 0) + usd
  const sum = (x: number | null | undefined, y: number | null | undefined) =>
    (x === null || x === undefined) && (y === null || y === undefined) ? null : (x ?? 0) + (y ?? 0)
  return {
    usd: sum(a.usd, b.usd),
    source: a.source === b.source ? a.source : `${a.source}+${b.source}`,
    models,
    unpriced_models: [...new Set([...(a.unpriced_models ?? []), ...(b.unpriced_models ?? [])])],
    transcript_usd: sum(a.transcript_usd, b.transcript_usd),
    reported_usd: sum(a.reported_usd, b.reported_usd),
  }
}
