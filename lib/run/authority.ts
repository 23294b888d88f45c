// The person decides, the coder only asks: a flag may tighten what the person's config says, never loosen it. Each
// refusal is `usage` naming the config key the person sets instead (DESIGN "Authority").
import { fail } from '../ground/errors.ts'
import type { Config } from './config.ts'
import type { Agent } from './state.ts'
import type { Vendor } from './vendors.ts'
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

/**
 * `--reviewers a,b`: a panel for this round, only two or more of the person's own `pair_loop.reviewers` (it chooses who
 * reviews); the list read, or null without the flag.
 */
export function checkReviewersFlag(value: string | undefined, config: Pick<Config, 'pair_loop'>): Vendor[] | null {
  if (value === undefined) return null
  const allowed = config.pair_loop.reviewers ?? []
  const asked = value.split(',').map((name) => name.trim())
  const outside = asked.filter((name) => !(allowed as string[]).includes(name))
  if (outside.length === 0 && asked.length >= 2 && new Set(asked).size === asked.length) return asked as Vendor[]
  fail(
    'usage',
    outside.length
      ? `--reviewers names ${outside.join(', ')}, outside your panel (pair_loop.reviewers in your config: ${allowed.join(', ') || 'none'}): a flag may only choose among the reviewers you listed`
      : `--reviewers needs two or more different vendors of your panel (pair_loop.reviewers: ${allowed.join(', ')}), got ${JSON.stringify(value)}`,
    { flag: '--reviewers', key: 'pair_loop.reviewers', allowed },
  )
}

/** `--reviewer-cmd` beside a panel: one reviewer or a panel, never both unsaid which (the panel is the person's). */
export function checkOneOrPanel(reviewerCmd: string[] | null, panel: Vendor[] | null): void {
  if (reviewerCmd === null || panel === null) return
  fail(
    'usage',
    `--reviewer-cmd names one reviewer, but this round has a panel (${panel.join(', ')}: --reviewers, or pair_loop.reviewers in your config): drop one of them`,
    { flag: '--reviewer-cmd', key: 'pair_loop.reviewers', panel },
  )
}
