// What `review` prints: the finished review (a loop round, or the final round on the PR), the document of a review
// still in flight, and the recorded result of an attempt when its worker's own outcome is not there to print.
import { reviewerShown } from '../run/reviewer-identity.ts'
import { type ErrorCode, ERROR_CODES, PairLoopError } from '../ground/errors.ts'
import { nextFields, roundsLeft } from '../run/run-queries.ts'
import type { ReviewClaim, RunState } from '../run/state.ts'
import type { AttemptOutcome, AttemptProgress } from './attempt-files.ts'
import { context } from '../ground/context.ts'
import { gateFields, gateOf } from '../run/gated-review.ts'
import { panelFields } from '../run/panel-shown.ts'

/** The finished round's review, as `review` has always printed it. */
export function reviewDocument(state: RunState) {
  const recorded = state.rounds.at(-1)!.reviewer!
  return {
    run_id: state.run_id,
    round: state.rounds.length,
    verdict: recorded.verdict,
    findings: recorded.findings,
    ...gateFields(gateOf(recorded, state.rounds.length)), // the verdict as said, and the gate's rule that approved
    ...panelFields(recorded), // a panel: each member's verdict and cost
    touches_reviewer_instructions: recorded.touches_reviewer_instructions ?? [],
    reviewer: {
      ...reviewerShown(recorded),
      fallback_used: recorded.fallback_used,
      structured: recorded.structured ?? false,
      session_id: recorded.session_id,
      model: recorded.model,
      calls: recorded.calls,
      duration_ms: recorded.duration_ms,
      cost_usd: recorded.cost?.usd ?? null,
      raw_output_path: recorded.raw_output_path,
    },
    ...nextFields(state),
    rounds_left: roundsLeft(state),
  }
}

/** The final round's review (`review --pr`). */
export function finalReviewDocument(state: RunState) {
  const final = state.final_review!.review
  return {
    run_id: state.run_id,
    round: 'pr',
    pr: state.pr,
    verdict: final.verdict,
    findings: final.findings,
    ...gateFields(gateOf(final, null)),
    reviewer: {
      ...reviewerShown(final),
      fallback_used: final.fallback_used,
      model: final.model,
      cost_usd: final.cost?.usd ?? null,
    },
    // changes asked for open a coder round (phase coding): post them on the PR first, then answer them as any review's
    phase: state.phase,
    ...(final.findings.length > 0 ? { next: 'pr-reply' } : nextFields(state)),
  }
}

/** A review still running when the wait ended: how far it got, and `next: "review"` to wait again. */
export function inFlightDocument(
  state: RunState,
  claim: ReviewClaim,
  progress: AttemptProgress | null,
  waitS: number,
  endedBy: string | null,
) {
  return {
    run_id: state.run_id,
    round: claim.kind === 'pr' ? 'pr' : state.rounds.length,
    in_progress: true,
    started_at: claim.started_at,
    elapsed_s: Math.max(0, Math.round((context().now() - Date.parse(claim.started_at)) / 1000)),
    wait_s: waitS,
    reviewer: {
      tool: progress?.tool ?? null,
      calls: progress?.calls ?? 0,
      session_id: progress?.sessions.at(-1) ?? null,
    },
    output: {
      bytes: progress?.output_bytes ?? 0,
      last_output_at: progress?.last_output_at ?? null,
      heartbeat_at: progress?.heartbeat_at ?? null,
    },
    worker: { pid: claim.pid, host: claim.host },
    // a panel: each member's state (running, retrying, answered, failed)
    ...(progress?.members
      ? { panel: Object.entries(progress.members).map(([tool, memberState]) => ({ tool, state: memberState })) }
      : {}),
    ...(endedBy ? { wait_ended_by: endedBy } : {}),
    next: 'review',
  }
}

/** An attempt's outcome as `review` prints it: the document, or its error thrown. */
export function outcomeResult(outcome: Pick<AttemptOutcome, 'document' | 'error'>): Record<string, unknown> {
  if (outcome.document) return outcome.document
  const error = outcome.error ?? { code: 'internal', message: 'the review ended without a result', details: {} }
  const code = (Object.hasOwn(ERROR_CODES, error.code) ? error.code : 'internal') as ErrorCode
  throw new PairLoopError(code, error.message, error.details)
}

/** The attempt's result read from the run when its outcome file is gone (the worker died between the two writes). */
export function recordedResult(state: RunState, claim: ReviewClaim): Record<string, unknown> {
  const since = (at: string) => at >= claim.started_at
  if (claim.kind === 'pr' && state.final_review && since(state.final_review.review.at))
    return finalReviewDocument(state)
  const review = state.rounds.at(-1)?.reviewer
  if (claim.kind !== 'pr' && review && since(review.at)) return reviewDocument(state)
  const failed = state.failed_reviews.at(-1)
  const error =
    failed && since(failed.at)
      ? { code: keptAs(failed.code), message: failed.message, details: { run_id: state.run_id, ...nextFields(state) } }
      : nothingRecorded(state, claim)
  return outcomeResult({ error })
}

/** Nothing recorded since the attempt began: a run closed under it (its worker keeps the cost), else a failed attempt. */
function nothingRecorded(state: RunState, claim: ReviewClaim) {
  if (state.phase === 'finished' && claim.kind !== 'pr')
    return {
      code: 'wrong_phase',
      message: `run ${state.run_id} was finished while this review ran: its verdict is not recorded (its cost is, once the reviewer ends)`,
      details: { run_id: state.run_id, phase: state.phase, next: null },
    }
  return {
    code: 'reviewer_failed',
    message: `the review worker (pid ${claim.pid}) ended without recording a result; run \`pair-loop review\` again`,
    details: { run_id: state.run_id, retryable: true, ...nextFields(state) },
  }
}

/** A kept attempt's code as the error that says it. */
const keptAs = (code: string) =>
  code === 'cancelled' ? 'interrupted' : code === 'finished_during_review' ? 'wrong_phase' : code
