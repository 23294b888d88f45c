// The review claim, as pure moves on the run: one review at a time; a dead claim is taken over; only the review that
// holds the claim releases it. (The phase never changes here: see lib/run/transitions.ts.)
import { fail } from '../ground/errors.ts'
import type { BudgetOverride, ReviewClaim, RunState } from '../run/state.ts'
import type { Step } from '../run/store.ts'
import { expectPhase } from '../run/transitions.ts'

export interface ClaimInput {
  claim: ReviewClaim
  /** Whether the claim already on the run belongs to a review that is still running (another live process). */
  heldElsewhere: boolean
  override: BudgetOverride | null
}

/** One review at a time: a claim held by a live review is `review_in_progress`; a dead one is taken over. */
export function claimReview(run: RunState, input: ClaimInput): Step<RunState> {
  expectPhase(run, ['reviewing'], 'review')
  const step = claimFinalRound(run, input)
  if (input.override) step.state!.budget_overrides.push(input.override)
  return step
}

/** The final round (`review --pr`) is one attempt at a time too; the run is finished, so no phase is asked for. */
export function claimFinalRound(run: RunState, input: Omit<ClaimInput, 'override'>): Step<RunState> {
  const held = run.review_claim
  if (held && held.pid !== input.claim.pid && input.heldElsewhere)
    fail(
      'review_in_progress',
      `another review of run ${run.run_id} is running (pid ${held.pid} since ${held.started_at})`,
      {
        run_id: run.run_id,
        claim: held,
      },
    )
  const next = structuredClone(run)
  next.review_claim = input.claim
  return { state: next, result: next }
}

/** The claim learns the reviewer's process group, for the next review to end if this one is killed outright. */
export function noteReviewerGroup(run: RunState, input: { pid: number; pgid: number; start: string | null }) {
  if (run.review_claim?.pid !== input.pid) return { result: undefined }
  const next = structuredClone(run)
  next.review_claim = { ...run.review_claim, reviewer_pgid: input.pgid, reviewer_start: input.start }
  return { state: next, result: undefined }
}

/** A review that ends without recording lets go of its claim (and only its own). */
export function releaseClaim(run: RunState, input: { pid: number }): Step<undefined> {
  if (run.review_claim?.pid !== input.pid) return { result: undefined }
  return { state: { ...structuredClone(run), review_claim: null }, result: undefined }
}
