#!/usr/bin/env node
// pr-stop: its flags, read into options for lib/commands/pr-stop.ts (end the watch of the run's PR).
import { defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as prStop from '../lib/commands/pr-stop.ts'
import { reasonFlag } from '../lib/cli/flags.ts'

const prStopScript = defineScript({
  name: 'pr-stop',
  description:
    "End the watch of the run's PR: the person took it over. pr-check still reads it, but names no next step.",
  args: {
    ...runArgs,
    reason: { type: 'string', description: 'why the watch ends, for the record', valueHint: 'R' },
  },
  async run(args, _io, ctx) {
    return prStop.run(ctx, { run: args.run, cwd: args.cwd, reason: reasonFlag(args.reason) ?? null })
  },
})

export default prStopScript
if (isMain(import.meta)) void main(prStopScript)
