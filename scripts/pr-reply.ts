#!/usr/bin/env node
// pr-reply: its flags, read into options for lib/commands/pr-reply.ts (answer one reviewer comment on the PR, once;
// or post the final round's findings as one PR review).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as prReply from '../lib/commands/pr-reply.ts'
import { fail } from '../lib/ground/errors.ts'
import { nodeIdFlag } from '../lib/cli/flags.ts'

const prReplyScript = defineScript({
  name: 'pr-reply',
  description:
    "Answer one reviewer comment on the run's PR (a review thread, a conversation comment, a review), once; or post the final round's findings as one PR review.",
  args: {
    ...runArgs,
    thread: { type: 'string', description: 'answer this review thread (PRRT_…), in the thread', valueHint: 'ID' },
    comment: { type: 'string', description: 'answer this conversation comment (its number id)', valueHint: 'ID' },
    review: { type: 'string', description: 'answer this review (its number id), in the conversation', valueHint: 'ID' },
    'body-file': { type: 'string', description: 'the answer, from a file or - for stdin', valueHint: 'file' },
    finding: {
      type: 'string',
      description: "with --comment/--review on a review bot's summary: the numbers of its findings this answers (1,3)",
      valueHint: 'N[,N]',
    },
    'review-findings': {
      type: 'boolean',
      description: "post the final round's findings (review --pr) as one PR review, inline where the diff has the line",
    },
    timeout: { type: 'string', description: 'time limit of each gh call, in seconds (default 60)', valueHint: 'S' },
  },
  async run(args, _io, ctx) {
    const timeoutS = integerFlag(args.timeout, 'timeout', { min: 1, max: 3600 })
    const targets = [args.thread, args.comment, args.review, args['review-findings'] ? true : undefined]
    if (targets.filter((target) => target !== undefined).length !== 1)
      fail('usage', 'give exactly one of --thread ID, --comment ID, --review ID or --review-findings', {
        flag: '--thread',
      })
    const thread = nodeIdFlag(args.thread, 'thread')
    if (args['review-findings']) {
      for (const flag of ['body-file', 'finding'] as const)
        if (args[flag] !== undefined)
          fail('usage', `--review-findings posts the final round as it is recorded; it takes no --${flag}`, {
            flag: `--${flag}`,
          })
      return prReply.run(ctx, { run: args.run, cwd: args.cwd, timeoutS, post: 'review-findings' })
    }
    if (args['body-file'] === undefined) fail('usage', 'missing required flag --body-file', { flag: '--body-file' })
    return prReply.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      timeoutS,
      post: 'answer',
      thread,
      comment: integerFlag(args.comment, 'comment', { min: 1 }),
      review: integerFlag(args.review, 'review', { min: 1 }),
      findings: findingNumbers(args.finding),
      bodyFile: args['body-file'],
    })
  },
})

/** `--finding 1,3`: the numbers of the bot summary's findings (`verdict.findings[].n`). */
function findingNumbers(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined
  if (!/^\s*[1-9]\d*\s*(,\s*[1-9]\d*\s*)*$/.test(value))
    fail('usage', `--finding must be finding numbers such as 1 or 1,3, got ${JSON.stringify(value)}`, {
      flag: '--finding',
    })
  return [...new Set(value.split(',').map((n) => Number(n.trim())))]
}

export default prReplyScript
if (isMain(import.meta)) void main(prReplyScript)
