// pr-resolve: resolve one review thread of the run's PR, recorded only once GitHub's answer confirms it.
import type { Context } from '../ground/context.ts'
import { withGhTimeout } from '../pr/gh-timeout.ts'
import { resolveThread } from '../pr/resolve.ts'
import { resolveRun } from '../run/run-access.ts'

export interface PrResolveOptions {
  run?: string
  cwd?: string
  /** The thread's GraphQL node id (PRRT_…), from pr-check. */
  thread: string
  /** Resolve a thread nobody answered: the person chose it (recorded, listed in status). */
  withoutReply?: boolean
  /** Time limit of each gh call, in seconds. */
  timeoutS?: number
}

export async function run(_ctx: Context, options: PrResolveOptions) {
  const run = resolveRun(options, { allowFinished: true })
  return withGhTimeout(options.timeoutS, () =>
    resolveThread(run, options.thread, { withoutReply: options.withoutReply ?? false }),
  )
}
