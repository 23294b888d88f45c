// Who holds a review claim: the claim a process makes for itself, and whether the process named by a claim on the run
// is still the one running (the liveness check every `review` and `status` makes).
import { context } from '../ground/context.ts'
import { heldByAnother, processStartTime } from '../ground/processes.ts'
import type { ReviewClaim } from '../run/state.ts'
import type { AttemptKind } from './attempt-files.ts'

/** A review may call its reviewer twice (a re-ask), each up to its timeout; a minute on top for the rest. */
const CLAIM_GRACE_MS = 60_000

/** A claim on an attempt, in the name of the worker that owns its call (this process's, for a claim without one). */
export function ownClaim(
  timeoutS: number,
  attempt: string | null = null,
  kind: AttemptKind = 'round',
  holder = context().pid,
): ReviewClaim {
  const now = context().now()
  return {
    pid: holder,
    host: context().host,
    started_at: new Date(now).toISOString(),
    pid_start: processStartTime(holder),
    expires_at: new Date(now + 2 * timeoutS * 1000 + CLAIM_GRACE_MS).toISOString(),
    reviewer_pgid: null,
    reviewer_start: null,
    attempt,
    kind,
  }
}

/**
 * A claim is held by another review while it has not expired and its process runs: on this host, the same pid
 * started at the same time (a recycled pid is not it); on another host (a container sharing PAIR_LOOP_HOME), until
 * it expires. A claim from before claims expired runs out after the default timeout's span.
 */
export function isHeldElsewhere(claim: ReviewClaim | null, now = context().now()): boolean {
  if (claim === null) return false
  const expires = claim.expires_at
    ? Date.parse(claim.expires_at)
    : Date.parse(claim.started_at) + 2 * 900_000 + CLAIM_GRACE_MS
  return heldByAnother(claim, expires, now)
}
