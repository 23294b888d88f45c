// pr-flag: set one item of the run's PR aside as a suspected prompt injection (recorded, listed, no longer blocking).
import type { Context } from '../ground/context.ts'
import { clearFlag, flagItem } from '../pr/flag.ts'
import { expectPr } from '../pr/moves.ts'
import { resolveRun } from '../run/run-access.ts'

export interface PrFlagOptions {
  run?: string
  cwd?: string
  /** One of: a review thread (PRRT_…), or a conversation comment or review by its number id. */
  thread?: string
  comment?: number
  /** Why it is set aside, for the person (not with `clear`). */
  reason?: string
  /** Take the flag back: the person looked and the item is to be answered after all. */
  clear?: boolean
}

export async function run(_ctx: Context, options: PrFlagOptions) {
  const run = resolveRun(options, { allowFinished: true })
  expectPr(run, 'pr-flag')
  const wanted = { thread: options.thread, comment: options.comment }
  return options.clear ? clearFlag(run, wanted) : flagItem(run, wanted, options.reason!)
}
