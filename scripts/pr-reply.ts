#!/usr/bin/env node
// pr-reply: post one answer on the run's PR (a thread reply, or a conversation comment answering a comment or a
// review), once per reviewer comment; or, with --review-findings, the final round's findings as one PR review.
import { readBody } from '../lib/body-input.ts'
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { postAnswer } from '../lib/pr/answer.ts'
import { postFinalReview } from '../lib/pr/final-post.ts'
import { expectPr } from '../lib/pr/moves.ts'
import { findTarget } from '../lib/pr/targets.ts'
import { configOf, resolveRun } from '../lib/run-access.ts'

/** `--finding 1,3`: the numbers of the bot summary's findings (`verdict.findings[].n`). */
function findingNumbers(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined
  if (!/^\s*[1-9]\d*\s*(,\s*[1-9]\d*\s*)*$/.test(value))
    fail('usage', `--finding must be finding numbers such as 1 or 1,3, got ${JSON.stringify(value)}`, {
      flag: '--finding',
    })
  return [...new Set(value.split(',').map((n) => Number(n.trim())))]
}

const prReply = defineScript({
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
  },
  async run(args, io) {
    const targets = [args.thread, args.comment, args.review, args['review-findings'] ? true : undefined]
    if (targets.filter((target) => target !== undefined).length !== 1)
      fail('usage', 'give exactly one of --thread ID, --comment ID, --review ID or --review-findings', {
        flag: '--thread',
      })
    if (args.thread !== undefined && !/^[A-Za-z0-9_=-]+$/.test(args.thread))
      fail('usage', `--thread must be a GraphQL node id such as PRRT_kwDO…, got ${JSON.stringify(args.thread)}`, {
        flag: '--thread',
      })
    if (args['review-findings']) {
      for (const flag of ['body-file', 'finding'] as const)
        if (args[flag] !== undefined)
          fail('usage', `--review-findings posts the final round as it is recorded; it takes no --${flag}`, {
            flag: `--${flag}`,
          })
      const run = resolveRun(args, { allowFinished: true })
      return postFinalReview(run, expectPr(run, 'pr-reply --review-findings'))
    }
    if (args['body-file'] === undefined) fail('usage', 'missing required flag --body-file', { flag: '--body-file' })
    const comment = integerFlag(args.comment, 'comment', { min: 1 })
    const review = integerFlag(args.review, 'review', { min: 1 })
    const body = await readBody(args['body-file'], 'body-file', { cwd: args.cwd, stdin: io.stdin })
    const run = resolveRun(args, { allowFinished: true })
    const pr = expectPr(run, 'pr-reply')
    const findings = findingNumbers(args.finding)
    const target = findTarget(run, pr, configOf(run).pair_loop.pr_bots, {
      thread: args.thread,
      comment,
      review,
      findings,
    })
    return postAnswer(run, target, body)
  },
})

export default prReply
if (isMain(import.meta)) void main(prReply)
