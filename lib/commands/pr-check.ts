// pr-check: the PR phase's one read-side step (a tick): collect the run's PR from GitHub (or replay a captured
// snapshot of it), decide keep going / stop / escalate, record it on the run, and say so.
import type { Context } from '../ground/context.ts'
import { prTick } from '../pr/tick.ts'
import { configOf, resolveRun } from '../run/run-access.ts'

export interface PrCheckOptions {
  run?: string
  cwd?: string
  /** Replay this captured PR snapshot file instead of reading GitHub. */
  snapshotIn?: string
  /** Also write the PR snapshot the tick read to this file. */
  snapshotOut?: string
  pageSize?: number
  timeoutS?: number
  /** The tick's time, ISO 8601 (tests, replays); default the Context's clock. */
  now?: string
  /** Decide and print without recording the tick. */
  dryRun?: boolean
}

export async function run(_ctx: Context, options: PrCheckOptions) {
  const run = resolveRun(options, { allowFinished: true })
  return prTick(run, {
    config: configOf(run),
    snapshotIn: options.snapshotIn,
    snapshotOut: options.snapshotOut,
    pageSize: options.pageSize,
    timeoutS: options.timeoutS,
    now: options.now,
    cwd: options.cwd,
    dryRun: options.dryRun,
  })
}
