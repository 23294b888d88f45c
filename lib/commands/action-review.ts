import type { Context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'

export async function runReview(_ctx: Context): Promise<never> {
  fail('usage', 'mode: review is not built yet', { input: 'mode' })
}
