// What the foreground `review` does with an attempt, for a loop round and for the final round alike: the liveness
// check first; then attach to the attempt in flight (never a second reviewer call), or print the outcome of one that
// ended while nobody waited, or start a new one: its detached worker (launched by `review` before anything else, so
// it starts up while the checks are made) gets the attempt once the run is claimed in its name; then a bounded wait.
import { fail, isPairLoopError } from '../ground/errors.ts'
import { preloadLock } from '../ground/lock.ts'
import { isProcessAlive } from '../ground/processes.ts'
import { changeRun } from '../run/run-access.ts'
import type { RunState } from '../run/state.ts'
import { readRun } from '../run/store.ts'
import {
  type AttemptJob,
  type AttemptKind,
  attemptLogPath,
  clearAttempt,
  type AttemptOutcome,
  isDelivered,
  lastOutcome,
  lastProgress,
  loopMark,
  markDelivered,
  readOutcome,
} from './attempt-files.ts'
import { releaseClaim } from './claim.ts'
import { settleDeadClaim } from './dead-worker.ts'
import { outcomeResult } from './documents.ts'
import { type Launched, launchWorker } from './launch.ts'
import { awaitAttempt, OUTCOME_GRACE_MS, pollUntil } from './wait.ts'

export interface ForegroundOptions {
  /** Seconds to wait for the review before printing the in-flight document (`--wait`, `pair_loop.review_wait_s`). */
  waitS: number
  /** When the command started (epoch ms): `--wait` bounds the whole command, not only its wait. */
  since?: number
  /** A signal ends the wait, never the review. */
  signal?: AbortSignal
  stderr: (text: string) => void
  log: (line: string) => void
  /** The review script itself (built or source): the worker runs it with `--worker`. */
  workerEntry: string
  /** The worker `review` launched first thing, for a new attempt; abandoned here when there is none to start. */
  worker?: Launched | null
}

/** A new attempt, claimed on the run in its worker's name (the state after the claim), and the worker's job. */
export interface Claimed {
  state: RunState
  job: Omit<AttemptJob, 'run_id' | 'attempt' | 'kind'>
}

/**
 * `start(run, attempt, launch)` makes the checks of its kind, calling `launch()` once the quick ones pass (it gives
 * the pid of the worker, started already or now), and claims the run under its lock for the attempt in that pid's name.
 */
export type StartAttempt = (run: RunState, attempt: string, launch: () => Promise<number>) => Promise<Claimed>

export async function runAttempt(
  run: RunState,
  kind: AttemptKind,
  options: ForegroundOptions,
  start: StartAttempt,
): Promise<Record<string, unknown>> {
  try {
    return await newOrAttached(run, kind, options, start)
  } finally {
    options.worker?.abandon() // nothing once its job was sent
  }
}

async function newOrAttached(
  run: RunState,
  kind: AttemptKind,
  options: ForegroundOptions,
  start: StartAttempt,
): Promise<Record<string, unknown>> {
  let current = await settleDeadClaim(run, { log: options.log })
  if (current.review_claim) return attach(current, options)
  let unseen = lastOutcome(current.run_id)
  if (!unseen) {
    unseen = await outcomeOnItsWay(current.run_id)
    if (unseen) current = readRun(current.run_id) // the mark is compared with the run as the worker left it
  }
  // it ended while nobody waited, and the loop has not moved since: this is the result the agent has not seen
  if (unseen?.kind === kind && unseen.mark === loopMark(current) && !isDelivered(run.run_id, unseen.attempt)) {
    markDelivered(run.run_id, unseen.attempt)
    return outcomeResult(unseen)
  }
  const worker = options.worker ?? launchWorker(options.workerEntry)
  if (!worker) fail('internal', `could not start the review worker: ${run.run_id}'s home has no runs folder`)
  preloadLock() // the claim's lock: its code loads while the checks wait on git
  // once the quick checks pass, the worker is told its run: it takes the change while the rest are made
  const launch = () => {
    worker.announce(run.run_id)
    return worker.pid
  }
  let claimed: Claimed
  try {
    claimed = await start(current, worker.attempt, launch)
  } catch (error) {
    worker.abandon()
    // another `review` claimed it a moment ago: wait for that one
    const now = isPairLoopError(error, 'review_in_progress') ? readRun(run.run_id) : null
    if (now?.review_claim) return attach(now, options)
    throw error
  }
  try {
    clearAttempt(run.run_id)
    worker.send({ ...claimed.job, run_id: run.run_id, attempt: worker.attempt, kind }, attemptLogPath(run.run_id))
  } catch (error) {
    worker.abandon()
    const holder = claimed.state.review_claim!.pid // the claim was made in the worker's name
    await changeRun(run.run_id, (state) => releaseClaim(state, { pid: holder })).catch(() => {})
    throw error
  }
  return awaitAttempt(run.run_id, claimed.state.review_claim!, { ...options, launched: true })
}

/**
 * The outcome of an attempt whose worker recorded its result a moment ago and is writing it now: its claim went with
 * the record, its outcome follows. Without this wait a `review` in between would start anew on a finished round.
 */
async function outcomeOnItsWay(runId: string): Promise<AttemptOutcome | null> {
  const progress = lastProgress(runId)
  if (!progress) return null
  const ended = () => readOutcome(runId, progress.attempt) !== null || !isProcessAlive(progress.worker_pid)
  await pollUntil(ended, OUTCOME_GRACE_MS, 10)
  return readOutcome(runId, progress.attempt)
}

/** Wait on the attempt in flight (one from before workers, without an id, is waited out through the run itself). */
const attach = (run: RunState, options: ForegroundOptions) => awaitAttempt(run.run_id, run.review_claim!, options)
