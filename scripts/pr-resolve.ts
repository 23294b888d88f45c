#!/usr/bin/env node
// pr-resolve: its flags, read into options for lib/commands/pr-resolve.ts (resolve one review thread, confirmed).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as prResolve from '../lib/commands/pr-resolve.ts'
import { nodeIdFlag } from '../lib/cli/flags.ts'

const prResolveScript = defineScript({
  name: 'pr-resolve',
  description: "Resolve one review thread of the run's PR and confirm it from GitHub's answer (3 attempts at most).",
  args: {
    ...runArgs,
    thread: { type: 'string', required: true, description: 'the thread id (PRRT_…) from pr-check', valueHint: 'ID' },
    'without-reply': {
      type: 'boolean',
      description: 'resolve a thread nobody answered: the person chose to (recorded, listed in status)',
    },
    timeout: { type: 'string', description: 'time limit of each gh call, in seconds (default 60)', valueHint: 'S' },
  },
  async run(args, _io, ctx) {
    return prResolve.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      thread: nodeIdFlag(args.thread, 'thread')!,
      withoutReply: args['without-reply'] === true,
      timeoutS: integerFlag(args.timeout, 'timeout', { min: 1, max: 3600 }),
    })
  },
})

export default prResolveScript
if (isMain(import.meta)) void main(prResolveScript)
