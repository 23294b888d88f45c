// One claimed review of the loop's round. The foreground (`review`) makes the checks, claims the run and starts the
// detached worker, then waits a bounded time (lib/review/foreground.ts); the worker conducts the review and records
// it, or keeps the failure (`conductRound`). A failure is never a verdict; a call stopped on purpose is kept too.
import { resumeBaseline, sessionToResume } from './continuity.ts'
import { afterFailure } from '../run/run-queries.ts'
import type { Config } from '../run/config.ts'
import { checkPanelBrake } from '../cost/panel-brake.ts'
import { type BudgetAssessment, checkBudgetBrake } from '../cost/brake.ts'
import { context } from '../ground/context.ts'
import { PairLoopError } from '../ground/errors.ts'
import { settings } from '../ground/settings.ts'
import { pairLoopHome, runArtifactsDir } from '../ground/paths.ts'
import { changeRun, checkBranch, configOf } from '../run/run-access.ts'
import type { RunState } from '../run/state.ts'
import { applyReview, expectPhase, type ReviewInput, recordFailedReview } from '../run/transitions.ts'
import type { AttemptJob } from './attempt-files.ts'
import { claimReview } from './claim.ts'
import { isHeldElsewhere, ownClaim } from './claim-holder.ts'
import { type CallRecord, conductReview } from './conduct.ts'
import { reviewDocument } from './documents.ts'
import { type ForegroundOptions, runAttempt } from './foreground.ts'
import { reapReviewerGroup } from './process.ts'
import { costOfCall, failureOf, reviewInputOf } from './recording.ts'
import { chooseReviewer, type ReviewerChoice } from './reviewers.ts'
import { stoppedAs, type TaskResult, type WorkerCall } from './worker.ts'
import { unchangedKeys } from './unchanged-keys.ts'
import { readPersonRules } from './rules.ts'
import { conductPanel, panelOf } from './panel-round.ts'
import type { Vendor } from '../run/vendors.ts'

export interface ReviewSessionOptions extends ForegroundOptions {
  config: Config
  /** `--reviewer-cmd`, the person's own choice for this call. */
  reviewerCmd: string[] | null
  /** `--reviewers`, checked against the person's panel (null: the config's panel, or one reviewer). */
  reviewers?: Vendor[] | null
  timeoutS: number | undefined
  overBudget: boolean
}

/** What every review call takes from the run's config and the command's flags. */
export function callSettings(
  run: RunState,
  choice: ReviewerChoice,
  options: { config: Config; timeoutS: number | null | undefined; log: (line: string) => void },
) {
  const { config } = options
  return {
    choice,
    maxDiffBytes: config.pair_loop.max_diff_bytes,
    exclude: config.pair_loop.review_exclude ?? [],
    rulesOf: () => readPersonRules(config, run.repo),
    timeoutMs: (options.timeoutS ?? config.pair_loop.reviewer_timeout_s) * 1000,
    artifactsDir: runArtifactsDir(run.run_id),
    costOf: costOfCall(choice, config),
    log: options.log,
  }
}

/** The whole `review` command past its flags: the finished review, the in-flight document, or the failure's error. */
export function reviewSession(run: RunState, options: ReviewSessionOptions) {
  return runAttempt(run, 'round', options, async (current, attempt, launch) => {
    const { config, log } = options
    expectPhase(current, ['reviewing'], 'review')
    const panel = panelOf({ reviewers: options.reviewers ?? null }, config)
    // a panel's members are chosen in the worker, each its own vendor: the run's reviewer (or fallback) does not review
    const choice = panel ? null : chooseReviewer(current, config, options.reviewerCmd)
    const worker = await launch() // it starts up while the branch and the budget are checked
    await checkBranch(current, 'review')
    const brake = await checkBudgetBrake(current, config, { overBudget: options.overBudget, command: 'review' })
    if (panel) checkPanelBrake(current, panel, brake.budget, { covered: brake.covered, overBudget: options.overBudget })
    const timeoutS = options.timeoutS ?? config.pair_loop.reviewer_timeout_s
    const state = await changeRun(current.run_id, (latest) => {
      const held = latest.review_claim
      // a panel's member may be called again alone after a failed call: its claim covers both calls' timeouts
      const claim = ownClaim(panel ? 2 * timeoutS : timeoutS, attempt, 'round', worker)
      const step = claimReview(latest, { claim, heldElsewhere: isHeldElsewhere(held), override: brake.override })
      // a review killed outright before its worker took over may have left a reviewer running
      if (held && reapReviewerGroup(held.reviewer_pgid, held.reviewer_start))
        log(`ended the reviewer left running by a killed review (process group ${held.reviewer_pgid})`)
      return step
    })
    if (choice?.fallback_used) log(`the ${current.reviewer} CLI is missing; falling back to ${choice.tool}`)
    const job = {
      reviewer_cmd: options.reviewerCmd,
      timeout_s: options.timeoutS ?? null,
      over_budget: brake.covered,
      budget_left_usd: choice ? budgetLeft(choice, brake.covered, brake.budget) : null,
      reviewers: options.reviewers ?? null,
    }
    return { state, job }
  })
}

/** The worker's task for a loop round: conduct the review and record the round, or keep the failed attempt. */
export async function conductRound(run: RunState, job: AttemptJob, call: WorkerCall): Promise<TaskResult> {
  const config = configOf(run)
  const panel = panelOf(job, config)
  if (panel) {
    const settings = (choice: ReviewerChoice) =>
      callSettings(run, choice, { config, timeoutS: job.timeout_s, log: call.log })
    const conducted = await conductPanel(run, panel, job, call, config, settings)
    if ('review' in conducted) return recordReview(run, conducted.review, conducted.tool, conducted.calls)
    for (const member of conducted.failed)
      await keepFailure(run.run_id, member.tool, member.code, member.message, member.calls)
    return { error: conducted.error }
  }
  const choice = call.watch.watched(chooseReviewer(run, config, job.reviewer_cmd))
  const resume = sessionToResume(run, choice, config.pair_loop.reviewer_resume_s ?? 0, context().now())
  if (resume) call.log(`continuing the ${choice.tool} reviewer's session ${resume} of the last round`)
  const conducted = await conductReview(run, {
    resume,
    resumeBaseline: resume ? resumeBaseline(run, resume) : null,
    ...callSettings(run, choice, { config, timeoutS: job.timeout_s, log: call.log }),
    budgetLeftUsd: job.budget_left_usd,
    heartbeatMs: heartbeatMs(),
    signalRelay: call.watch.control,
    onSpawn: call.onSpawn,
    change: call.change,
  })
  await call.noted()
  const stopped = conducted.ok ? null : stoppedAs(call.watch.stopped(), choice.tool)
  if (!conducted.ok) {
    const code = stopped?.code ?? conducted.code
    const message = stopped?.message ?? conducted.message
    await keepFailure(run.run_id, choice.tool, stopped?.kept ?? conducted.code, message, conducted.calls)
    const details = {
      run_id: run.run_id,
      round: run.rounds.length,
      tool: choice.tool,
      phase: run.phase,
      ...afterFailure(run, stopped?.kept ?? conducted.code),
      raw_output_path: conducted.calls.at(-1)?.raw_output_path ?? null,
      ...(stopped ? {} : conducted.details),
    }
    return { error: { code, message, details } }
  }
  return recordReview(run, reviewInputOf(choice, conducted, job.over_budget), choice.tool, conducted.calls)
}

/** The review goes on the run, or, when the run was finished meanwhile, only its cost does (it was paid for). */
async function recordReview(
  run: RunState,
  review: ReviewInput,
  tool: ReviewerChoice['tool'],
  calls: CallRecord[],
): Promise<TaskResult> {
  const late = `run ${run.run_id} was finished while this review ran: its verdict was not recorded, its cost was`
  const recorded = await changeRun<RunState | { tooLate: RunState['phase'] }>(run.run_id, (state) =>
    state.phase === 'finished'
      ? // the verdict comes too late to count, but the call was paid for
        {
          state: recordFailedReview(state, {
            failure: failureOf(tool, 'finished_during_review', late, calls),
            pid: context().pid,
          }).state,
          result: { tooLate: state.phase },
        }
      : applyReview(state, { pid: context().pid, review: withUnchangedKeys(state, review) }),
  )
  if ('tooLate' in recorded)
    throw new PairLoopError('wrong_phase', late, { run_id: run.run_id, phase: recorded.tooLate, next: null })
  return { document: reviewDocument(recorded) }
}

/** The review with the findings it repeats on unchanged files (a stalemate's), when there are any. */
function withUnchangedKeys(run: RunState, review: ReviewInput): ReviewInput {
  const keys = unchangedKeys(run, review.findings, review.tree ?? null, pairLoopHome())
  return keys.length > 0 ? { ...review, unchanged_keys: keys } : review
}

/** The failed attempt stays on the run (it was paid for); the run stays in `reviewing`, ready for the same command. */
async function keepFailure(
  runId: string,
  tool: ReviewerChoice['tool'],
  code: string,
  message: string,
  calls: CallRecord[],
) {
  const failure = failureOf(tool, code, message, calls)
  await changeRun(runId, (state) => recordFailedReview(state, { failure, pid: context().pid }))
}

/**
 * What is left of the run's limit, for a reviewer that caps its own spend (`--max-budget-usd`): null without a limit,
 * for a reviewer without a cap, or when the person chose to go over the limit (`--over-budget`).
 */
function budgetLeft(choice: ReviewerChoice, overridden: boolean, budget: BudgetAssessment | null): number | null {
  if (!choice.spendCap || overridden || budget === null || budget.limit === null) return null
  return Math.max(budget.limit - budget.spent, 0)
}

/** How often a review in flight notes it is alive: 15 s, or PAIR_LOOP_HEARTBEAT_S (tests). */
const heartbeatMs = (): number => settings().heartbeatMs
