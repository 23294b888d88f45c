#!/usr/bin/env node
// status: its flags, read into options for lib/commands/status.ts (where a run stands, or every run; --wait blocks).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as status from '../lib/commands/status.ts'
import { fail } from '../lib/ground/errors.ts'

const statusScript = defineScript({
  name: 'status',
  description: 'Where a run stands: phase, round, next step, open findings, budget; --all for every run.',
  args: {
    ...runArgs,
    all: { type: 'boolean', description: 'list every run (for dashboards and jq)' },
    wait: { type: 'string', description: 'block up to S seconds for a change, then report `changed`', valueHint: 'S' },
  },
  async run(args, _io, ctx) {
    const waitS = integerFlag(args.wait, 'wait', { max: 86_400 })
    if (args.all && args.run !== undefined)
      fail('usage', '--all lists every run; give --all or --run, not both', { flag: '--run' })
    return status.run(ctx, { run: args.run, cwd: args.cwd, all: args.all ?? false, waitS })
  },
})

export default statusScript
if (isMain(import.meta)) void main(statusScript)
