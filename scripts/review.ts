#!/usr/bin/env node
// review: its flags, read into options for lib/commands/review.ts (the reviewer's round, in a detached worker). Run as
// `review --worker <attempt>`, it is that worker.
// Only what starts the worker is imported up front, the rest when it is needed: `review` starts a new attempt's worker
// first, so the worker's start-up runs while `review` loads its code, finds the run and makes its checks.
import { fileURLToPath } from 'node:url'
import { defineScript, integerFlag, isMain, main, runArgs, signalsAsAbort } from '../lib/cli/cli.ts'
import { type Launched, launchWorker, workerArgs } from '../lib/review/launch.ts'

const ENTRY = fileURLToPath(import.meta.url)

const reviewScript = defineScript({
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
    reviewers: {
      type: 'string',
      description: "this round's panel, vendors by commas (codex,gemini): only within the person's pair_loop.reviewers",
      valueHint: 'a,b',
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
  async run(args, _io, ctx) {
    const since = ctx.now()
    const worker = args.cancel ? null : earlyWorker()
    try {
      const [{ parseReviewerCmd }, review] = await Promise.all([
        import('../lib/review/reviewers.ts'),
        import('../lib/commands/review.ts'),
      ])
      const reviewerCmd = parseReviewerCmd(args['reviewer-cmd'])
      return await review.run(ctx, {
        run: args.run,
        cwd: args.cwd,
        reviewerCmd,
        reviewers: args.reviewers,
        timeoutS: integerFlag(args.timeout, 'timeout', { min: 1, max: 86_400 }),
        waitS: integerFlag(args.wait, 'wait', { max: 86_400 }),
        cancel: args.cancel ?? false,
        overBudget: args['over-budget'] ?? false,
        pr: args.pr ?? false,
        since,
        workerEntry: ENTRY,
        worker,
      })
    } finally {
      worker?.abandon() // a worker not needed after all (a refusal, an attach) reads no job and exits
    }
  },
})

/** The new attempt's worker, started first; if it cannot start now, `review` starts it when it needs it, and says why. */
function earlyWorker(): Launched | null {
  try {
    return launchWorker(ENTRY)
  } catch {
    return null
  }
}

export default reviewScript
if (isMain(import.meta)) {
  const worker = workerArgs(process.argv.slice(2))
  if (!worker) void main(reviewScript)
  else void runAsWorker(worker)
}

/** The worker: its code loads while its `review` finds the run and claims it; the process ends with the attempt. */
async function runAsWorker(started: NonNullable<ReturnType<typeof workerArgs>>): Promise<void> {
  try {
    const [{ runWorker }, { conductRound }, { processContext, withContext }, { toStderr, toStdout }] =
      await Promise.all([
        import('../lib/review/worker.ts'),
        import('../lib/review/session.ts'),
        import('../lib/ground/context.ts'),
        import('../lib/ground/stdio.ts'),
      ])
    // one Context for the worker's whole attempt; a signal ends its reviewer (lib/review/worker.ts), never the worker
    const { signal } = signalsAsAbort(['SIGTERM', 'SIGINT', 'SIGHUP'])
    const ctx = processContext({ stdin: process.stdin, stdout: toStdout, stderr: toStderr, signal })
    await withContext(ctx, () =>
      runWorker(started, {
        round: conductRound,
        pr: async (...call) => (await import('../lib/pr/final-round.ts')).conductFinalRound(...call),
      }),
    )
    process.exit(0)
  } catch (error) {
    process.stderr.write(`review worker: ${(error as Error).stack ?? error}\n`) // its log, beside the run's state
    process.exit(70)
  }
}
