// pr-check: the PR phase's one read-side step (a tick): collect the run's PR from GitHub (or replay a captured
// snapshot of it), decide keep going / stop / escalate, record it on the run, and say so.
import { resolve } from 'node:path'
import type { Context } from '../ground/context.ts'
import { checkInputFile, checkOutputFile } from '../ground/file-flags.ts'
import { prTick } from '../pr/tick.ts'
import { configOf, resolveRun } from '../run/run-access.ts'

export interface PrCheckOptions {
  run?: string
  cwd?: string
  /** Replay this captured PR snapshot file instead of reading GitHub: a dry run, the run is not changed. */
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

export async function run(ctx: Context, options: PrCheckOptions) {
  const cwd = options.cwd ?? ctx.cwd
  // the files first, before GitHub is asked: lstat'ed, and the one written never inside the home
  const snapshotIn = options.snapshotIn === undefined ? undefined : resolve(cwd, options.snapshotIn)
  if (snapshotIn !== undefined) checkInputFile(snapshotIn, '--snapshot-in')
  const snapshotOut =
    options.snapshotOut === undefined
      ? undefined
      : checkOutputFile(resolve(cwd, options.snapshotOut), '--snapshot-out', ctx.home)
  const run = resolveRun(options, { allowFinished: true })
  return prTick(run, {
    config: configOf(run),
    snapshotIn,
    snapshotOut,
    pageSize: options.pageSize,
    timeoutS: options.timeoutS,
    now: options.now,
    cwd: options.cwd,
    dryRun: options.dryRun,
  })
}
