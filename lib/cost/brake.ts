// The budget: levels against the limit, and the brake that keeps a round from opening at or over it.
import { askBudget } from '../run/ask.ts'
import type { Config } from '../run/config.ts'
import { PairLoopError } from '../ground/errors.ts'
import { formatUsd } from '../ground/money.ts'
import { pairLoopHome } from '../ground/paths.ts'
import { currentRound } from '../run/run-queries.ts'
import type { BudgetOverride, RunState } from '../run/state.ts'
import { rememberHighWater } from './high-water.ts'
import { computeLedger } from './ledger.ts'
import type { Ledger } from './ledger-types.ts'
import { context, nowIso } from '../ground/context.ts'

export type BudgetLevel = 'none' | 'warn' | 'alert' | null

/** null without a limit; `alert` at or over it; `warn` from warn_ratio of it; else `none`. */
export function budgetLevel(spent: number, limit: number | null, warnRatio: number): BudgetLevel {
  if (limit === null) return null
  if (spent >= limit) return 'alert'
  if (spent >= limit * warnRatio) return 'warn'
  return 'none'
}

export interface BudgetAssessment {
  level: BudgetLevel
  spent: number
  limit: number | null
  warn_at: number | null
  warn_ratio: number
  ledger: Ledger
}

/** What the budget reads from the command's config (resolved once by the command): the limit, warn ratio, prices. */
export type BudgetConfig = Pick<Config, 'budget' | 'pricing'>

/**
 * The run's spend against its limit: `limit` (a flag) if given, else the run's budget, else config's per-run budget.
 * With a limit, usage no price covers is `alert` whatever the figure: spend that cannot be measured is not under it.
 */
export function assessBudget(
  run: RunState,
  config: BudgetConfig,
  options: { limit?: number; env?: NodeJS.ProcessEnv } = {},
): BudgetAssessment {
  const env = options.env ?? context().env
  const limit = options.limit ?? run.budget_usd ?? config.budget.per_run_usd
  const ledger = computeLedger(run, { pricing: config.pricing, env })
  const spent = ledger.spent_usd
  const warnRatio = config.budget.warn_ratio
  return {
    level: limit !== null && ledger.unpriced_usage.length > 0 ? 'alert' : budgetLevel(spent, limit, warnRatio),
    spent,
    limit,
    warn_at: limit === null ? null : limit * warnRatio,
    warn_ratio: warnRatio,
    ledger,
  }
}

export const roleTotals = (ledger: Ledger) => ({
  coder: ledger.by_role.coder.usd,
  reviewer: ledger.by_role.reviewer.usd,
})

/** The person's "go on" given in the round the run is in: `coder-done --over-budget` covers that round's review too. */
export const choiceForRound = (run: RunState): BudgetOverride | null =>
  run.budget_overrides.find((override) => override.round === currentRound(run)) ?? null

/**
 * Called before `coder-done` or `review` opens a round. At or over the limit: `budget_exceeded` unless the person
 * chose to go on (`--over-budget`), in which case the override to record on the run is returned, or already chose so
 * for this round (`covered`: nothing new to record, one "go on" is asked for once a round). The assessment made is
 * returned too (null without a limit), so the caller need not compute the ledger again.
 */
export async function checkBudgetBrake(
  run: RunState,
  config: BudgetConfig,
  opts: { overBudget: boolean; command: string; env?: NodeJS.ProcessEnv },
): Promise<{ override: BudgetOverride | null; covered: boolean; budget: BudgetAssessment | null }> {
  if ((run.budget_usd ?? config.budget.per_run_usd) === null) return { override: null, covered: false, budget: null }
  const env = opts.env ?? context().env
  const budget = assessBudget(run, config, { env })
  await rememberHighWater(run, budget.ledger.seen, pairLoopHome(env))
  if (budget.level !== 'alert') return { override: null, covered: false, budget }
  const limit = budget.limit!
  if (!opts.overBudget && choiceForRound(run)) return { override: null, covered: true, budget }
  if (!opts.overBudget) {
    throw new PairLoopError(
      'budget_exceeded',
      `${overLimit(run.run_id, budget)}; ask the person, then pass --over-budget to ${opts.command} anyway`,
      {
        run_id: run.run_id,
        spent_usd: budget.spent,
        limit_usd: limit,
        level: budget.level,
        by_role: roleTotals(budget.ledger),
        unpriced_models: budget.ledger.unpriced_models,
        unpriced_usage: budget.ledger.unpriced_usage,
        next: 'ask-user',
        ask: askBudget(opts.command),
      },
    )
  }
  return {
    override: {
      at: nowIso(),
      command: opts.command,
      round: currentRound(run),
      spent_usd: budget.spent,
      limit_usd: limit,
    },
    covered: true,
    budget,
  }
}

/** Why an `alert` assessment is one: the limit reached, or usage on models no price covers (named). */
export function overLimit(runId: string, budget: BudgetAssessment): string {
  const unpriced = budget.ledger.unpriced_usage
  if (unpriced.length > 0)
    return `run ${runId} used ${unpriced.join(', ')}, which no price covers, so its spend cannot be held to its ${formatUsd(budget.limit)} budget (add a price under "pricing" in config)`
  return `run ${runId} has spent ${formatUsd(budget.spent)} of its ${formatUsd(budget.limit)} budget`
}
