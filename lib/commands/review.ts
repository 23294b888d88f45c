// review: the reviewer's round on the run's change: start (or attach to) the detached review and wait for it a
// bounded time, then say what it recorded or how far it got; or end the review in flight; or, for the PR, the final
// round on the pushed diff. The session and the final round load only when they are needed (start-up stays cheap).
import type { Context } from '../ground/context.ts'
import type { Launched } from '../review/launch.ts'
import { configOf, resolveRun } from '../run/run-access.ts'
import { readPersonRules } from '../review/rules.ts'
import { checkOneOrPanel, checkReviewerCmdFlag, checkReviewersFlag } from '../run/authority.ts'

export interface ReviewOptions {
  run?: string
  cwd?: string
  /** The person's reviewer command for this call (`--reviewer-cmd`, a builtin resolved), or the run's. */
  reviewerCmd: string[] | null
  /** `--reviewers a,b`: this round's panel, within the person's `pair_loop.reviewers`. */
  reviewers?: string
  timeoutS?: number
  /** How long to wait for the review before saying it is in progress (default pair_loop.review_wait_s). */
  waitS?: number
  /** End the review in flight instead. */
  cancel: boolean
  overBudget: boolean
  /** The final round on the pushed PR's diff. */
  pr: boolean
  /** When the command started (the Context's clock): the wait counts from here. */
  since: number
  /** The script a review worker runs. */
  workerEntry: string
  /** A worker started before anything else was loaded, for a new attempt (null: none, or it could not start). */
  worker: Launched | null
}

export async function run(ctx: Context, options: ReviewOptions) {
  const log = (line: string) => ctx.io.stderr(`pair-loop review: ${line}\n`)
  const run = resolveRun(options, { allowFinished: options.pr })
  if (options.cancel) return (await import('../review/cancel.ts')).cancelAttempt(run, options.pr ? 'pr' : 'round', log)
  const config = configOf(run)
  checkReviewerCmdFlag(options.reviewerCmd, config)
  readPersonRules(config, run.repo) // a rules file that cannot be read is said now, before any claim on the run
  const reviewers = checkReviewersFlag(options.reviewers, config)
  if (!options.pr) checkOneOrPanel(options.reviewerCmd, reviewers ?? config.pair_loop.reviewers)
  const session = {
    config,
    reviewerCmd: options.reviewerCmd,
    reviewers,
    timeoutS: options.timeoutS,
    overBudget: options.overBudget,
    waitS: options.waitS ?? config.pair_loop.review_wait_s,
    since: options.since,
    signal: ctx.io.signal,
    stderr: ctx.io.stderr,
    log,
    workerEntry: options.workerEntry,
    worker: options.worker,
  }
  // awaited, both: the script lets go of an unused worker once this returns, never before its job is sent
  if (!options.pr) return await (await import('../review/session.ts')).reviewSession(run, session)
  const { finalRound } = await import('../pr/final-round.ts') // the PR phase's code only for the final round
  return await finalRound(run, session)
}
