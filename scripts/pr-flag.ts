#!/usr/bin/env node
// pr-flag: set one item of the run's PR aside as a suspected prompt injection (recorded, listed, no longer blocking).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { flagItem } from '../lib/pr/flag.ts'
import { expectPr } from '../lib/pr/moves.ts'
import { resolveRun } from '../lib/run-access.ts'

const MAX_REASON_CHARS = 1000

const prFlag = defineScript({
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
    reason: { type: 'string', required: true, description: 'why it is set aside, for the person', valueHint: 'R' },
  },
  async run(args) {
    if ((args.thread === undefined) === (args.comment === undefined))
      fail('usage', 'give exactly one of --thread ID or --comment ID', { flag: '--thread' })
    if (args.thread !== undefined && !/^[A-Za-z0-9_=-]+$/.test(args.thread))
      fail('usage', `--thread must be a GraphQL node id such as PRRT_kwDO…, got ${JSON.stringify(args.thread)}`, {
        flag: '--thread',
      })
    const reason = args.reason.trim()
    if (reason === '' || reason.length > MAX_REASON_CHARS)
      fail('usage', `--reason must say why, in 1 to ${MAX_REASON_CHARS} characters`, { flag: '--reason' })
    const comment = integerFlag(args.comment, 'comment', { min: 1 })
    const run = resolveRun(args, { allowFinished: true })
    expectPr(run, 'pr-flag')
    return flagItem(run, { thread: args.thread, comment }, reason)
  },
})

export default prFlag
if (isMain(import.meta)) void main(prFlag)
