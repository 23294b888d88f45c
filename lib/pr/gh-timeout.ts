// `--timeout S` of pr-reply and pr-resolve (pr-check's too): the time limit of each gh call the command makes, for its
// calls only, as the environment variable the gh runner reads would set it.
import { context, withContext } from '../ground/context.ts'

export function withGhTimeout<T>(timeoutS: number | undefined, fn: () => Promise<T>): Promise<T> {
  if (timeoutS === undefined) return fn()
  const ctx = context()
  return withContext({ ...ctx, env: { ...ctx.env, PAIR_LOOP_GH_TIMEOUT_S: String(timeoutS) } }, fn)
}
