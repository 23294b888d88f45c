// pr-stop: end the watch of the run's PR (the person took it over): recorded once, and no command names pr-check next.
import type { Context } from '../ground/context.ts'
import { expectPr, recordStop } from '../pr/moves.ts'
import { changeRun, resolveRun } from '../run/run-access.ts'

export interface PrStopOptions {
  run?: string
  cwd?: string
  /** Why the watch ends, for the record (the script checks its length). */
  reason: string | null
}

export async function run(ctx: Context, options: PrStopOptions) {
  const run = resolveRun(options, { allowFinished: true })
  const pr = expectPr(run, 'pr-stop')
  const at = new Date(ctx.now()).toISOString()
  const stopped = await changeRun(run.run_id, (state) => recordStop(state, { at, reason: options.reason }))
  return { run_id: run.run_id, pr, stopped: true, at: stopped.at, reason: stopped.reason, next: null }
}
