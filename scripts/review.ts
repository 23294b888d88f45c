#!/usr/bin/env node
// review: the reviewer's round. Parse the flags, run the claimed review session, print what it recorded.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { finalRound } from '../lib/pr/final-round.ts'
import { parseReviewerCmd } from '../lib/review/reviewers.ts'
import { reviewSession } from '../lib/review/session.ts'
import { checkBranch, configOf, resolveRun } from '../lib/run-access.ts'
import { expectPhase } from '../lib/transitions.ts'

const review = defineScript({
  name: 'review',
  description: 'Run the reviewer on the working tree, parse its verdict and findings, record the round.',
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
    'over-budget': { type: 'boolean', description: 'the person chose to go on although the run is at its budget' },
    pr: {
      type: 'boolean',
      description: "the final round (pair_loop.pr_final_round): review the pushed PR's diff against its base, once",
    },
  },
  async run(args, io) {
    const reviewerCmd = parseReviewerCmd(args['reviewer-cmd'])
    const timeoutS = integerFlag(args.timeout, 'timeout', { min: 1, max: 86_400 })
    const log = (line: string) => io.stderr(`pair-loop review: ${line}\n`)
    if (args.pr) {
      const run = resolveRun(args, { allowFinished: true })
      const config = configOf(run)
      return finalRound(run, {
        config,
        reviewerCmd,
        timeoutS,
        overBudget: args['over-budget'] ?? false,
        log,
        signal: io.signal,
      })
    }
    const run = resolveRun(args)
    expectPhase(run, ['reviewing'], 'review')
    await checkBranch(run, 'review')
    return reviewSession(run, {
      config: configOf(run),
      reviewerCmd,
      timeoutS,
      overBudget: args['over-budget'] ?? false,
      log,
      signal: io.signal,
    })
  },
})

export default review
if (isMain(import.meta)) void main(review)
