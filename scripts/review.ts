#!/usr/bin/env node
// review: the reviewer's round. Parse the flags, start (or attach to) the detached review and wait for it a bounded
// time, print what it recorded or how far it got. Run as `review --worker <run> <attempt>`, it is that worker.
import { fileURLToPath } from 'node:url'
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { cancelAttempt } from '../lib/review/cancel.ts'
import { workerArgs } from '../lib/review/launch.ts'
import { parseReviewerCmd } from '../lib/review/reviewers.ts'
import { conductRound, reviewSession } from '../lib/review/session.ts'
import { runWorker } from '../lib/review/worker.ts'
import { configOf, resolveRun } from '../lib/run-access.ts'

const review = defineScript({
  name: 'review',
  description:
    'Run the reviewer on the working tree in a detached worker, wait for it a bounded time, record its verdict and findings.',
  args: {
    ...runArgs,
    'reviewer-cmd': {
      type: 'string',
      description:
        'a reviewer command as a JSON array (it gets the prompt on stdin), or builtin:NAME, a stub shipped with pair-loop (builtin:approve, builtin:changes, …)',
      valueHint: 'json|builtin:NAME',
    },
    timeout: {
      type: 'string',
      description: 'seconds before the reviewer is killed (default pair_loop.reviewer_timeout_s, 900)',
      valueHint: 'S',
    },
    wait: {
      type: 'string',
      description:
        'seconds to wait for the review before printing `in_progress: true` (default pair_loop.review_wait_s, 100); run review again to wait again',
      valueHint: 'S',
    },
    cancel: {
      type: 'boolean',
      description: 'end the review in flight (its reviewer and whole process group); the attempt is kept as cancelled',
    },
    'over-budget': { type: 'boolean', description: 'the person chose to go on although the run is at its budget' },
    pr: {
      type: 'boolean',
      description: "the final round (pair_loop.pr_final_round): review the pushed PR's diff against its base, once",
    },
  },
  async run(args, io) {
    const since = Date.now()
    const reviewerCmd = parseReviewerCmd(args['reviewer-cmd'])
    const timeoutS = integerFlag(args.timeout, 'timeout', { min: 1, max: 86_400 })
    const waitFlag = integerFlag(args.wait, 'wait', { max: 86_400 })
    const log = (line: string) => io.stderr(`pair-loop review: ${line}\n`)
    const run = resolveRun(args, { allowFinished: args.pr ?? false })
    if (args.cancel) return cancelAttempt(run, args.pr ? 'pr' : 'round', log)
    const config = configOf(run)
    const options = {
      config,
      reviewerCmd,
      timeoutS,
      overBudget: args['over-budget'] ?? false,
      waitS: waitFlag ?? config.pair_loop.review_wait_s,
      since,
      signal: io.signal,
      stderr: io.stderr,
      log,
      workerEntry: fileURLToPath(import.meta.url),
    }
    if (!args.pr) return reviewSession(run, options)
    const { finalRound } = await import('../lib/pr/final-round.ts') // the PR phase's code only for the final round
    return finalRound(run, options)
  },
})

export default review
if (isMain(import.meta)) {
  const worker = workerArgs(process.argv.slice(2))
  if (!worker) void main(review)
  else
    runWorker(worker, {
      round: conductRound,
      pr: async (...call) => (await import('../lib/pr/final-round.ts')).conductFinalRound(...call),
    }).then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`review worker: ${error.stack ?? error}\n`) // its log, beside the run's state
        process.exit(70)
      },
    )
}
