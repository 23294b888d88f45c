// A gh side effect made once per key (a PR opened, a reply or a review posted): the claim taken under the run's lock,
// the call made outside it, what it did recorded under the lock again. A call that fails lets go of its claim, so the
// same command can be run again; a second call at the same time sees the claim (the claim moves: lib/run/claims.ts).
import { isClaimLive, ownSideClaim, releaseSideClaim } from './claims.ts'
import { context } from '../ground/context.ts'
import type { SideClaim } from './pr-schema.ts'
import { changeRun } from './run-access.ts'
import type { RunState } from './state.ts'
import type { Step } from './store.ts'

/** This call's claim, and whether a live call holds the key already: what a claim move decides on. */
export interface ClaimAttempt {
  claim: SideClaim
  heldLive: boolean
}

/** Under the run's lock, the claim move on `key` with this call's claim; its result (a move may refuse by failing). */
export function claimUnderLock<C>(
  runId: string,
  key: string,
  move: (state: RunState, attempt: ClaimAttempt) => Step<C>,
): Promise<C> {
  return changeRun(runId, (state) => move(state, { claim: ownSideClaim(), heldLive: isClaimLive(state.claims?.[key]) }))
}

/** What the call did, and what recording it returned. */
export interface Called<T, R> {
  done: T
  recorded: R
}

/**
 * Holding the claim on `key`: make the call, then record what it did under the lock (the record move drops the
 * claim). A call that fails lets go of the claim and fails as it did.
 */
export async function callHoldingClaim<T, R>(
  runId: string,
  key: string,
  call: () => Promise<T>,
  record: (state: RunState, done: T) => Step<R>,
): Promise<Called<T, R>> {
  let done: T
  try {
    done = await call()
  } catch (error) {
    const pid = context().pid
    await changeRun(runId, (state) => releaseSideClaim(state, { key, pid })).catch(() => {}) // the call's error is the answer
    throw error
  }
  const recorded = await changeRun(runId, (state) => record(state, done))
  return { done, recorded }
}

/** The whole sequence: claim `key` (or be refused by the claim move), make the call, record it. */
export async function callOnce<T, R>(
  runId: string,
  key: string,
  steps: {
    claim: (state: RunState, attempt: ClaimAttempt) => Step<unknown>
    call: () => Promise<T>
    record: (state: RunState, done: T) => Step<R>
  },
): Promise<Called<T, R>> {
  await claimUnderLock(runId, key, steps.claim)
  return callHoldingClaim(runId, key, steps.call, steps.record)
}
