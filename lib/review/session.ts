// One claimed review session: claim the run, conduct the review, record it or keep the failure, release the claim.
// A person's SIGINT/SIGTERM is relayed to the reviewer's process group; a failure is never a verdict.
import { hostname } from 'node:os'
import type { Config } from '../config.ts'
import { type BudgetAssessment, checkBudgetBrake } from '../cost/brake.ts'
import { interruptedError, PairLoopError } from '../errors.ts'
import { heldByAnother, processStartTime } from '../processes.ts'
import { runArtifactsDir } from '../paths.ts'
import { readRun } from '../store.ts'
import { changeRun } from '../run-access.ts'
import { nextStep, roundsLeft } from '../run-queries.ts'
import type { ReviewClaim, RunState } from '../state.ts'
import { applyReview, expectPhase, recordFailedReview } from '../transitions.ts'
import { claimReview, noteReviewerGroup, releaseClaim } from './claim.ts'
import { type CallRecord, conductReview } from './conduct.ts'
import { costOfCall, failureOf, reviewInputOf } from './recording.ts'
import { reapReviewerGroup } from './process.ts'
import { chooseReviewer, type ReviewerChoice } from './reviewers.ts'

export interface ReviewSessionOptions {
  config: Config
  /** `--reviewer-cmd`, the person's own choice for this call. */
  reviewerCmd: string[] | null
  timeoutS: number | undefined
  overBudget: boolean
  log: (line: string) => void
  /** SIGINT/SIGTERM of the person: the reviewer's group is ended and the attempt kept as interrupted. */
  signal?: AbortSignal
}

/** A person's SIGINT/SIGTERM, relayed to the running reviewer (conduct sets `kill`); `dispose` once it is over. */
export function relaySignal(signal?: AbortSignal) {
  const relay = { kill: null as (() => void) | null, interrupted: false }
  const onSignal = () => {
    relay.interrupted = true
    relay.kill?.()
  }
  signal?.addEventListener('abort', onSignal, { once: true })
  if (signal?.aborted) onSignal()
  return { relay, dispose: () => signal?.removeEventListener('abort', onSignal) }
}

/** What every review call takes from the run's config and the command's flags. */
export function callSettings(run: RunState, choice: ReviewerChoice, options: ReviewSessionOptions) {
  const { config } = options
  return {
    choice,
    maxDiffBytes: config.pair_loop.max_diff_bytes,
    timeoutMs: (options.timeoutS ?? config.pair_loop.reviewer_timeout_s) * 1000,
    artifactsDir: runArtifactsDir(run.run_id),
    costOf: costOfCall(choice, config),
    log: options.log,
  }
}

/** The whole `review` command past its flags: returns the review document, or throws the failure's error. */
export async function reviewSession(run: RunState, options: ReviewSessionOptions) {
  const { config, log } = options
  expectPhase(run, ['reviewing'], 'review')
  const choice = chooseReviewer(run, config, options.reviewerCmd)
  const brake = await checkBudgetBrake(run, config, { overBudget: options.overBudget, command: 'review' })
  const { override } = brake
  const budgetLeftUsd = budgetLeft(choice, override !== null, brake.budget)

  const claimed = await changeRun(run.run_id, (state) => {
    const held = state.review_claim
    const claim = ownClaim(options.timeoutS ?? config.pair_loop.reviewer_timeout_s)
    const step = claimReview(state, { claim, heldElsewhere: isHeldElsewhere(held), override })
    // the review holding a dead claim was killed outright (SIGKILL can't be relayed): its reviewer may still run
    if (held && reapReviewerGroup(held.reviewer_pgid, held.reviewer_start))
      log(`ended the reviewer left running by a killed review (process group ${held.reviewer_pgid})`)
    return step
  })

  if (choice.fallback_used) log(`the ${run.reviewer} CLI is missing; falling back to ${choice.tool}`)
  let noted: Promise<void> = Promise.resolve()
  const { relay, dispose } = relaySignal(options.signal)
  try {
    const conducted = await conductReview(claimed, {
      ...callSettings(run, choice, options),
      budgetLeftUsd,
      heartbeatMs: heartbeatMs(),
      signalRelay: relay,
      onSpawn: (pgid) => {
        noted = changeRun(run.run_id, (state) =>
          noteReviewerGroup(state, { pid: process.pid, pgid, start: processStartTime(pgid) }),
        ).catch(() => {}) // only a safety net: the review goes on without it
      },
    })
    await noted
    if (!conducted.ok && relay.interrupted && options.signal) {
      // the person stopped it: not the reviewer's failure, and not retried as one
      const error = interruptedError(options.signal, 'the review')
      await keepFailure(run.run_id, choice.tool, 'interrupted', error.message, conducted.calls)
      throw error
    }
    if (!conducted.ok) {
      await keepFailure(run.run_id, choice.tool, conducted.code, conducted.message, conducted.calls)
      throw new PairLoopError(conducted.code, conducted.message, {
        run_id: run.run_id,
        round: claimed.rounds.length,
        tool: choice.tool,
        phase: claimed.phase,
        next: 'review',
        raw_output_path: conducted.calls.at(-1)?.raw_output_path ?? null,
        ...conducted.details,
      })
    }
    const late = `run ${run.run_id} was finished while this review ran: its verdict was not recorded, its cost was`
    const recorded = await changeRun<RunState | null>(run.run_id, (state) =>
      state.phase === 'finished'
        ? // the verdict comes too late to count, but the call was paid for
          {
            state: recordFailedReview(state, {
              failure: failureOf(choice.tool, 'finished_during_review', late, conducted.calls),
              pid: process.pid,
            }).state,
            result: null,
          }
        : applyReview(state, { pid: process.pid, review: reviewInputOf(choice, conducted, override !== null) }),
    )
    if (recorded === null)
      throw new PairLoopError('wrong_phase', late, { run_id: run.run_id, phase: readRun(run.run_id).phase, next: null })
    return reviewDocument(recorded)
  } catch (error) {
    await changeRun(run.run_id, (state) => releaseClaim(state, { pid: process.pid })).catch(() => {})
    throw error
  } finally {
    dispose()
  }
}

function reviewDocument(state: RunState) {
  const recorded = state.rounds.at(-1)!.reviewer!
  return {
    run_id: state.run_id,
    round: state.rounds.length,
    verdict: recorded.verdict,
    findings: recorded.findings,
    touches_reviewer_instructions: recorded.touches_reviewer_instructions ?? [],
    reviewer: {
      tool: recorded.tool,
      fallback_used: recorded.fallback_used,
      structured: recorded.structured ?? false,
      session_id: recorded.session_id,
      model: recorded.model,
      calls: recorded.calls,
      duration_ms: recorded.duration_ms,
      cost_usd: recorded.cost?.usd ?? null,
      raw_output_path: recorded.raw_output_path,
    },
    next: nextStep(state),
    rounds_left: roundsLeft(state),
  }
}

/** A review may call its reviewer twice (a re-ask), each up to its timeout; a minute on top for the rest. */
const CLAIM_GRACE_MS = 60_000

function ownClaim(timeoutS: number): ReviewClaim {
  const now = Date.now()
  return {
    pid: process.pid,
    host: hostname(),
    started_at: new Date(now).toISOString(),
    pid_start: processStartTime(process.pid),
    expires_at: new Date(now + 2 * timeoutS * 1000 + CLAIM_GRACE_MS).toISOString(),
    reviewer_pgid: null,
    reviewer_start: null,
  }
}

/**
 * A claim is held by another review while it has not expired and its process runs: on this host, the same pid
 * started at the same time (a recycled pid is not it); on another host (a container sharing PAIR_LOOP_HOME), until
 * it expires. A claim from before claims expired runs out after the default timeout's span.
 */
export function isHeldElsewhere(claim: ReviewClaim | null, now = Date.now()): boolean {
  if (claim === null) return false
  const expires = claim.expires_at
    ? Date.parse(claim.expires_at)
    : Date.parse(claim.started_at) + 2 * 900_000 + CLAIM_GRACE_MS
  return heldByAnother(claim, expires, now)
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
  await changeRun(runId, (state) => recordFailedReview(state, { failure, pid: process.pid }))
}

/**
 * What is left of the run's limit, for a claude reviewer's `--max-budget-usd`: null without a limit, for another
 * reviewer, or when the person chose to go over the limit (`--over-budget`).
 */
function budgetLeft(choice: ReviewerChoice, overridden: boolean, budget: BudgetAssessment | null): number | null {
  if (choice.tool !== 'claude' || overridden || budget === null || budget.limit === null) return null
  return Math.max(budget.limit - budget.spent, 0)
}

function heartbeatMs(): number {
  const seconds = Number(process.env.PAIR_LOOP_HEARTBEAT_S)
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : 15) * 1000
}
