// `review --cancel`: the person ends the review in flight, on purpose. The worker is told (a note beside the state,
// then SIGTERM): it ends its reviewer's process group and keeps the attempt as `cancelled`, with the cost its named
// session shows. A worker that does not stop in time is killed with its whole group and the attempt is settled here.
// The run stays where it was (`reviewing`): the next `review` starts a new attempt.
import { context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { isProcessAlive } from '../ground/processes.ts'
import { nextFields } from '../run/run-queries.ts'
import type { ReviewClaim, RunState } from '../run/state.ts'
import { readRun } from '../run/store.ts'
import { type AttemptKind, askCancel, markDelivered, readOutcome, readProgress } from './attempt-files.ts'
import { isHeldElsewhere } from './claim-holder.ts'
import { settleDeadClaim } from './dead-worker.ts'
import { reapReviewerGroup } from './process.ts'
import { pollUntil } from './wait.ts'

/** The worker's own stop: the reviewer's group gets SIGTERM, then SIGKILL 2 s later; then the attempt is recorded. */
const CANCEL_GRACE_MS = 8_000
const EXIT_GRACE_MS = 2_000

export async function cancelAttempt(run: RunState, kind: AttemptKind, log: (line: string) => void) {
  const held = run.review_claim
  const ours = held !== null && (held.kind ?? 'round') === kind
  if (!ours) return { run_id: run.run_id, cancelled: false, reason: 'no review in flight', ...nextFields(run) }
  if (held.host !== context().host)
    fail('review_in_progress', `the review of run ${run.run_id} runs on host ${held.host}: cancel it there`, {
      run_id: run.run_id,
      claim: held,
    })
  if (!isHeldElsewhere(held)) return cancelledDocument(await settleDeadClaim(run, { log, code: 'cancelled' }), kind)

  const progress = readProgress(run.run_id, held.attempt)
  if (held.attempt) askCancel(run.run_id, held.attempt)
  signal(held.pid, 'SIGTERM')
  let latest = held
  const stopped = await pollUntil(() => {
    const now = readRun(run.run_id).review_claim
    if (now && now.attempt === held.attempt) latest = now // it may have learnt the reviewer's group since
    return !now || now.attempt !== held.attempt
  }, CANCEL_GRACE_MS)
  if (!stopped) {
    // it did not stop: its whole group goes (while it runs the group is its own), and the attempt is settled here
    if (progress?.worker_pgid && isHeldElsewhere(latest)) signal(-progress.worker_pgid, 'SIGKILL')
    signal(latest.pid, 'SIGKILL')
    await settleDeadClaim(readRun(run.run_id), { log, code: 'cancelled', force: true })
  }
  await endLeftovers(latest, progress?.worker_pgid ?? null)
  const outcome = held.attempt ? readOutcome(run.run_id, held.attempt) : null
  if (outcome?.document)
    return { run_id: run.run_id, cancelled: false, reason: 'the review had finished', review: outcome.document }
  if (held.attempt) markDelivered(run.run_id, held.attempt) // seen: the next `review` starts a new attempt
  return cancelledDocument(readRun(run.run_id), kind)
}

/** Nothing of the attempt runs on: the worker (and what it started in its group), the reviewer's group. */
async function endLeftovers(claim: ReviewClaim, workerPgid: number | null): Promise<void> {
  if (!(await pollUntil(() => !isProcessAlive(claim.pid), EXIT_GRACE_MS)) && workerPgid) signal(-workerPgid, 'SIGKILL')
  reapReviewerGroup(claim.reviewer_pgid, claim.reviewer_start)
}

function cancelledDocument(state: RunState, kind: AttemptKind) {
  const kept = state.failed_reviews.at(-1)
  return {
    run_id: state.run_id,
    cancelled: true,
    round: kind === 'pr' ? 'pr' : state.rounds.length,
    attempt: kept
      ? {
          code: kept.code,
          at: kept.at,
          tool: kept.tool,
          session_id: kept.session_id ?? null,
          cost_usd: kept.cost?.usd ?? null,
        }
      : null,
    phase: state.phase,
    ...nextFields(state),
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {} // gone already
}
