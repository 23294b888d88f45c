// pr-resolve: resolve one review thread of the run's PR, recorded only once GitHub's answer confirms it.
import type { Context } from '../ground/context.ts'
import { resolveThread } from '../pr/resolve.ts'
import { resolveRun } from '../run/run-access.ts'

export interface PrResolveOptions {
  run?: string
  cwd?: string
  /** The thread's GraphQL node id (PRRT_…), from pr-check. */
  thread: string
}

export async function run(_ctx: Context, options: PrResolveOptions) {
  return resolveThread(resolveRun(options, { allowFinished: true }), options.thread)
}
