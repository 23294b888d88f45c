#!/usr/bin/env node
// pr-flag: its flags, read into options for lib/commands/pr-flag.ts (set one PR item aside as a suspected injection).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as prFlag from '../lib/commands/pr-flag.ts'
import { fail } from '../lib/ground/errors.ts'
import { nodeIdFlag, reasonFlag } from '../lib/cli/flags.ts'

const prFlagScript = defineScript({
  name: 'pr-flag',
  description:
    "Set one review thread, conversation comment or review of the run's PR aside as a suspected prompt injection: recorded, listed in threads.flagged_injection[], no longer blocking success.",
  args: {
    ...runArgs,
    thread: { type: 'string', description: 'the review thread (PRRT_…) from pr-check', valueHint: 'ID' },
    comment: {
      type: 'string',
      description: 'the conversation comment or review (its number id) from pr-check',
      valueHint: 'ID',
    },
    reason: { type: 'string', description: 'why it is set aside, for the person (required to flag)', valueHint: 'R' },
    clear: { type: 'boolean', description: 'take the flag back: the person cleared the item, it is answerable again' },
  },
  async run(args, _io, ctx) {
    if ((args.thread === undefined) === (args.comment === undefined))
      fail('usage', 'give exactly one of --thread ID or --comment ID', { flag: '--thread' })
    const thread = nodeIdFlag(args.thread, 'thread')
    const comment = integerFlag(args.comment, 'comment', { min: 1 })
    if (args.clear) {
      if (args.reason !== undefined) fail('usage', '--clear takes no --reason', { flag: '--reason' })
      return prFlag.run(ctx, { run: args.run, cwd: args.cwd, thread, comment, clear: true })
    }
    if (args.reason === undefined) fail('usage', 'missing required flag --reason', { flag: '--reason' })
    const reason = reasonFlag(args.reason)!
    return prFlag.run(ctx, { run: args.run, cwd: args.cwd, thread, comment, reason })
  },
})

export default prFlagScript
if (isMain(import.meta)) void main(prFlagScript)
