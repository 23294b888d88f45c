// The brake for a panel: a round of several reviewers at once opens only when the run can afford it whole, every
// member's call, estimated from what each cost last (or what the run's last review cost), never one member's worth.
import { askBudget } from '../run/ask.ts'
import { PairLoopError } from '../ground/errors.ts'
import { formatUsd } from '../ground/money.ts'
import type { RunState } from '../run/state.ts'
import type { ReviewerTool } from '../run/vendors.ts'
import type { BudgetAssessment } from './brake.ts'

/** What a member's call is expected to cost: its own last cost on this run, else the run's last review's, else 0. */
export function memberEstimate(run: Pick<RunState, 'rounds'>, tool: ReviewerTool): number {
  let anyLast: number | null = null
  for (const round of [...run.rounds].reverse()) {
    const review = round.reviewer
    if (!review) continue
    const members = review.panel ?? [{ tool: review.tool, cost: review.cost }]
    const own = members.find((member) => member.tool === tool && member.cost?.usd != null)
    if (own) return own.cost!.usd!
    const usd = members.find((member) => member.cost?.usd != null)?.cost?.usd
    anyLast ??= usd ?? null
  }
  return anyLast ?? 0
}

/** The panel round's estimate: the sum over its members. */
export const panelEstimate = (run: Pick<RunState, 'rounds'>, tools: ReviewerTool[]): number =>
  tools.reduce((sum, tool) => sum + memberEstimate(run, tool), 0)

/**
 * `budget_exceeded` when the run's spend plus the panel's estimate is past its limit, unless the person chose to go
 * on (`--over-budget`, or already this round). Without a limit there is nothing to refuse.
 */
export function checkPanelBrake(
  run: Pick<RunState, 'run_id' | 'rounds'>,
  tools: ReviewerTool[],
  budget: BudgetAssessment | null,
  options: { covered: boolean; overBudget: boolean },
): void {
  if (!budget || budget.limit === null || options.covered || options.overBudget) return
  const estimate = panelEstimate(run, tools)
  if (budget.spent + estimate <= budget.limit) return
  throw new PairLoopError(
    'budget_exceeded',
    `a panel round of ${tools.join(', ')} would cost about ${formatUsd(estimate)} (each member's last cost), and run ${run.run_id} has ${formatUsd(Math.max(budget.limit - budget.spent, 0))} of its ${formatUsd(budget.limit)} limit left: it cannot afford the panel whole; ask the person, then pass --over-budget to review anyway`,
    {
      run_id: run.run_id,
      spent_usd: budget.spent,
      limit_usd: budget.limit,
      estimate_usd: estimate,
      panel: tools,
      next: 'ask-user',
      ask: askBudget('review'),
    },
  )
}
