// codes: the closed error-code table, for agents and scripts that branch on exit status.
import type { Context } from '../ground/context.ts'
import { codeTable } from '../ground/errors.ts'

export async function run(_ctx: Context, _options: Record<string, never> = {}) {
  return { codes: codeTable() }
}
