// The claim's liveness check, made by every `review` and `status`: a claim whose process is gone (a worker SIGKILLed,
// a machine restarted, a worker that crashed, or one whose `review` died before sending its job) is ended. The reviewer it left running is ended
// too, the attempt is kept as a failed one with whatever its transcripts show it cost, and a new review can start: no
// state says "running" for a process that is gone.
import { context, nowIso } from '../ground/context.ts'
import { costOfReviewerCall } from '../cost/reviewer.ts'
import { configOf, changeRun } from '../run/run-access.ts'
import type { ReviewClaim, RunState } from '../run/state.ts'
import { readRun } from '../run/store.ts'
import { recordFailedReview } from '../run/transitions.ts'
import { type AttemptProgress, loopMark, markDelivered, readProgress, writeOutcome } from './attempt-files.ts'
import { releaseClaim } from './claim.ts'
import { isHeldElsewhere } from './claim-holder.ts'
import type { CallRecord } from './conduct.ts'
import { reapReviewerGroup } from './process.ts'
import { failureOf } from './recording.ts'

export interface Settling {
  log: (line: string) => void
  /** The code the attempt is kept under: a worker found dead failed; one a person cancelled was cancelled. */
  code?: 'reviewer_failed' | 'cancelled'
  /** Also end a claim whose process still runs (a cancel whose worker did not stop in time). */
  force?: boolean
}

/** The run after the check: as it was when its claim (if any) is alive, else with the dead attempt settled. */
export async function settleDeadClaim(run: RunState, settling: Settling): Promise<RunState> {
  const claim = run.review_claim
  if (!claim || (!settling.force && isHeldElsewhere(claim))) return run
  const progress = readProgress(run.run_id, claim.attempt)
  const code = settling.code ?? 'reviewer_failed'
  // a call was made (so maybe paid for): priced from the sessions it named, outside the lock
  const paid = Boolean(claim.attempt && (progress?.calls || claim.reviewer_pgid))
  const message =
    code === 'cancelled'
      ? 'the review was cancelled (`pair-loop review --cancel`)'
      : `the review worker (pid ${claim.pid}) was gone before it recorded a result (killed, or the machine restarted); run \`pair-loop review\` again`
  const failure = paid ? failureOf(progress?.tool ?? 'custom', code, message, callsOf(run, progress)) : null
  const ended = await changeRun(run.run_id, (state) => {
    const held = state.review_claim
    if (!sameClaim(held, claim) || (!settling.force && isHeldElsewhere(held))) return { result: false }
    endLeftReviewer(held!, settling.log)
    const step = failure
      ? recordFailedReview(state, { failure, pid: held!.pid })
      : releaseClaim(state, { pid: held!.pid })
    return { state: step.state, result: true }
  })
  if (ended && claim.attempt) {
    const state = readRun(run.run_id)
    // for a `review` attached to it; never printed to a later one, which starts a new attempt
    writeOutcome(run.run_id, {
      attempt: claim.attempt,
      kind: claim.kind ?? 'round',
      mark: loopMark(state),
      at: nowIso(),
      error: {
        code: code === 'cancelled' ? 'interrupted' : 'reviewer_failed',
        message,
        details: { run_id: run.run_id, next: 'review', ...(code === 'cancelled' ? { cancelled: true } : {}) },
      },
    })
    markDelivered(run.run_id, claim.attempt)
    return state
  }
  return readRun(run.run_id)
}

const sameClaim = (a: ReviewClaim | null, b: ReviewClaim) =>
  a !== null && a.pid === b.pid && a.host === b.host && a.attempt === b.attempt && a.started_at === b.started_at

/** The reviewer a dead claim left running (its process group, on this host, if it is still that process) is ended. */
function endLeftReviewer(claim: ReviewClaim, log: (line: string) => void): void {
  if (claim.host !== context().host) return
  if (reapReviewerGroup(claim.reviewer_pgid, claim.reviewer_start))
    log(`ended the reviewer left running by a killed review (process group ${claim.reviewer_pgid})`)
}

/** Each call the attempt started, priced from its session's transcript: whatever the transcript shows was paid. */
function callsOf(run: RunState, progress: AttemptProgress | null): Array<Omit<CallRecord, 'raw_output_path'>> {
  const tool = progress?.tool ?? 'custom'
  const pricing = configOf(run).pricing
  const sessions: Array<string | null> = progress?.sessions.length ? progress.sessions : [null]
  return sessions.map((session) => ({
    reply: null,
    usage: null,
    duration_ms: 0,
    session_id: session,
    cost: session
      ? costOfReviewerCall({ tool, model: null, usage: null, reported_usd: null, session_id: session }, { pricing })
      : null,
  }))
}
