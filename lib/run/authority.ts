// The person decides, the coder only asks: a flag may tighten what the person's config says, never loosen it. Each
// refusal is `usage` naming the config key the person sets instead (DESIGN "Authority").
import { fail } from '../ground/errors.ts'
import type { Config } from './config.ts'
import type { Agent } from './state.ts'
import { loosens, type Severity } from './severity-gate.ts'

/** `--budget-usd` above the person's limit (`budget.per_run_usd`); with no limit set, any limit only tightens. */
export function checkBudgetFlag(budgetUsd: number | undefined, config: Pick<Config, 'budget'>): void {
  const limit = config.budget.per_run_usd
  if (budgetUsd === undefined || limit === null || budgetUsd <= limit) return
  fail(
    'usage',
    `--budget-usd ${budgetUsd} is above your limit of ${limit} (budget.per_run_usd in your config): a flag may lower it, only your config raises it`,
    { flag: '--budget-usd', key: 'budget.per_run_usd', limit },
  )
}

/** `--block-on` above the person's gate (`pair_loop.block_on`): a flag may make more findings block, never fewer. */
export function checkBlockOnFlag(blockOn: Severity | undefined, config: Pick<Config, 'pair_loop'>): void {
  const gate = config.pair_loop.block_on
  if (!loosens(blockOn, gate)) return
  fail(
    'usage',
    `--block-on ${blockOn} would let through findings your gate blocks (pair_loop.block_on: ${gate} in your config): a flag may lower it towards nit, only your config raises it`,
    { flag: '--block-on', key: 'pair_loop.block_on', block_on: gate },
  )
}

/** A reviewer of the coder's own vendor, chosen by a flag, unless the person allows it (`pair_loop.allow_same_vendor`). */
export function checkVendors(
  coder: Agent,
  reviewer: Agent,
  fromFlags: boolean,
  config: Pick<Config, 'pair_loop'>,
): void {
  if (!fromFlags || coder !== reviewer || config.pair_loop.allow_same_vendor) return
  fail(
    'usage',
    `${reviewer} would review its own vendor's work (--coder/--reviewer): set pair_loop.allow_same_vendor: true in your config ($PAIR_LOOP_HOME/config.json) to allow it`,
    { flag: '--reviewer', key: 'pair_loop.allow_same_vendor', coder, reviewer },
  )
}

/** `--reviewer-cmd` (a command or `builtin:*`) chooses who reviews: only when the person's config allows it. */
export function checkReviewerCmdFlag(reviewerCmd: string[] | null, config: Pick<Config, 'pair_loop'>): void {
  if (reviewerCmd === null || config.pair_loop.allow_reviewer_cmd) return
  fail(
    'usage',
    '--reviewer-cmd chooses who reviews, which is yours to decide: set pair_loop.allow_reviewer_cmd: true in your config ($PAIR_LOOP_HOME/config.json) to allow a command or builtin:* reviewer',
    { flag: '--reviewer-cmd', key: 'pair_loop.allow_reviewer_cmd' },
  )
}
