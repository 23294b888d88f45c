// What a run has cost so far, in the shape status, finish and the PR body show: the ledger's total, coder and reviewer.
import type { Config } from '../run/config.ts'
import { isPairLoopError } from '../ground/errors.ts'
import type { HighWater, RunState } from '../run/state.ts'
import { computeLedger } from './ledger.ts'
import { type Unmeasured, unmeasuredOf } from './measured.ts'
import { context } from '../ground/context.ts'

export interface RunCostSummary {
  total_usd: number
  by_round: Record<number, number>
  by_role: { coder: number; reviewer: number }
  complete: boolean
  /** The roles and rounds whose figure is no measurement (shown as such, never as $0). */
  unmeasured: Unmeasured
  /** The transcript files the figures came from (what a cached summary must watch). */
  files: string[]
  /** What each coder session showed (Ledger.seen), for finish to keep as its high-water mark. */
  seen: HighWater
}

/**
 * `config` reads the command's config (called once, by the one command that needs the figures). Never fails for a
 * bad config (status must always answer): the embedded price table is used, and the summary says it is incomplete.
 */
export async function runCostSummary(
  run: RunState,
  config: () => Pick<Config, 'pricing'>,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<RunCostSummary> {
  let pricing: Config['pricing'] = {}
  let configOk = true
  try {
    pricing = config().pricing
  } catch (error) {
    if (!isPairLoopError(error, 'config_invalid')) throw error
    configOk = false
    context().io.stderr(`pair-loop: warning: ${error.message}; costing with the embedded price table\n`)
  }
  const ledger = computeLedger(run, { pricing, env: options.env })
  const by_round: Record<number, number> = {}
  for (const row of ledger.rounds) by_round[row.n] = row.usd
  return {
    total_usd: ledger.spent_usd,
    by_round,
    by_role: { coder: ledger.by_role.coder.usd, reviewer: ledger.by_role.reviewer.usd },
    complete: ledger.complete && configOk,
    unmeasured: unmeasuredOf(ledger),
    files: ledger.sources.flatMap((source) =>
      source.role === 'coder' && source.kind !== 'state' && source.path ? [source.path] : [],
    ),
    seen: ledger.seen,
  }
}
