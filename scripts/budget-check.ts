#!/usr/bin/env node
// budget-check: its flags, read into options for lib/commands/budget-check.ts (the run's cost; exit 13 at the limit).
import { decimalFlag, defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as budgetCheck from '../lib/commands/budget-check.ts'

const budgetCheckScript = defineScript({
  name: 'budget-check',
  description: "The run's cost so far by round, role and model, from the agents' own records; exit 13 at the limit.",
  args: {
    ...runArgs,
    limit: {
      type: 'string',
      description: 'the limit to check against in USD (default: the run budget, then config budget.per_run_usd)',
      valueHint: 'USD',
    },
  },
  async run(args, _io, ctx) {
    return budgetCheck.run(ctx, { run: args.run, cwd: args.cwd, limit: decimalFlag(args.limit, 'limit') })
  },
})

export default budgetCheckScript
if (isMain(import.meta)) void main(budgetCheckScript)
