// codes: the closed error-code table, for agents and scripts that branch on exit status.
import type { Context } from '../context.ts'
import { codeTable } from '../errors.ts'

export async function run(_ctx: Context, _options: Record<string, never> = {}) {
  return { codes: codeTable() }
}
