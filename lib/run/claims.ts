// Claims on gh side effects (a PR being opened, a reply being posted), as pure moves on the run: key, claim under the
// run's lock, call gh outside it, then record and drop the claim under the lock. A second call sees the claim.
import { context, nowDate } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { heldByAnother } from '../ground/processes.ts'
import type { SideClaim } from './pr-schema.ts'
import { replyKey } from './run-queries.ts'
import type { RunState } from './state.ts'
import type { Step } from './store.ts'

/** A gh call is bounded (3 attempts of at most a minute, with waits): a claim older than this is of a dead process. */
const CLAIM_LIFETIME_MS = 10 * 60_000

export function ownSideClaim(now = nowDate()): SideClaim {
  const { pid, host } = context()
  return { pid, host, at: now.toISOString() }
}

/** Held by another call still running: this host's live pid (another host's until the claim expires), not ours. */
export function isClaimLive(claim: SideClaim | undefined, now = context().now()): boolean {
  return claim !== undefined && heldByAnother(claim, Date.parse(claim.at) + CLAIM_LIFETIME_MS, now)
}

export type ClaimResult = { taken: true } | { taken: false; held: SideClaim }

/** Take the claim on `key`, unless a live call holds it (then nothing changes and the holder is returned). */
export function takeClaim(
  run: RunState,
  input: { key: string; claim: SideClaim; heldLive: boolean },
): Step<ClaimResult> {
  const held = run.claims?.[input.key]
  if (held && input.heldLive) return { result: { taken: false, held } }
  const next = structuredClone(run)
  next.claims = { ...next.claims, [input.key]: input.claim }
  return { state: next, result: { taken: true } }
}

/** Drop our own claim on `key` (the call failed, or its result is recorded beside this). */
export function dropClaim(run: RunState, input: { key: string; pid: number }): RunState | null {
  if (run.claims?.[input.key]?.pid !== input.pid) return null
  const next = structuredClone(run)
  const { [input.key]: _dropped, ...rest } = next.claims!
  next.claims = rest
  return next
}

/** As a move of its own: a failed call lets go, so the same command can be run again. */
export function releaseSideClaim(run: RunState, input: { key: string; pid: number }): Step<undefined> {
  const next = dropClaim(run, input)
  return next ? { state: next, result: undefined } : { result: undefined }
}

/** The claim key of a reply being posted on the PR. */
export const replyPostKey = (findingId: string) => `reply:${findingId}`

/** Before posting a reply on the PR: posted already, or being posted by another call, is `duplicate_reply`. */
export function claimReplyPost(
  run: RunState,
  input: { finding: string; claim: SideClaim; heldLive: boolean },
): Step<undefined> {
  const recorded = run.replies[input.finding]
  const busy = takeClaim(run, { key: replyPostKey(input.finding), claim: input.claim, heldLive: input.heldLive })
  if (recorded?.comment_url || !busy.result.taken)
    fail(
      'duplicate_reply',
      `the reply to finding ${input.finding} is ${recorded?.comment_url ? 'already on the PR' : 'being posted by another call'}`,
      {
        run_id: run.run_id,
        key: replyKey(run, input.finding),
        recorded: recorded ?? null,
        ...(busy.result.taken ? {} : { in_flight: busy.result.held }),
      },
    )
  return { state: busy.state!, result: undefined }
}

/** The claim key of the run's PR being opened (`finish --create-pr`). */
export const PR_CREATE_KEY = 'pr:create'

/**
 * Before `gh pr create`: a PR recorded meanwhile is the answer (`pr`); another call opening it right now holds the
 * claim (`held`); else this call claims it.
 */
export function claimPrCreation(
  run: RunState,
  input: { claim: SideClaim; heldLive: boolean },
): Step<{ pr: RunState } | { held: SideClaim } | { claimed: true }> {
  if (run.pr !== null) return { result: { pr: run } }
  const step = takeClaim(run, { key: PR_CREATE_KEY, claim: input.claim, heldLive: input.heldLive })
  return step.result.taken ? { state: step.state!, result: { claimed: true } } : { result: { held: step.result.held } }
}
