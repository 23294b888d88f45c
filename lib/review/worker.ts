// The detached worker that owns a review attempt's reviewer call (`<review script> --worker <attempt>`, started
// by lib/review/launch.ts). It reads its run and job on stdin once its `review` has claimed the run in its name, runs the
// attempt's task (the loop's round, or the final round on the PR) with its own watchdog and heartbeat, records the
// result under the run's lock as `review` always did, leaves the outcome beside the state for whichever `review` asks
// next, and lets go of the claim. A SIGTERM (`review --cancel`, or the system) ends its reviewer; the attempt is kept,
// with its cost.
import { rmSync } from 'node:fs'
import { context, nowIso } from '../ground/context.ts'
import { toPairLoopError } from '../ground/errors.ts'
import { preloadLock } from '../ground/lock.ts'
import { processStartTime } from '../ground/processes.ts'
import { changeRun, configOf } from '../run/run-access.ts'
import type { RunState } from '../run/state.ts'
import { readRun } from '../run/store.ts'
import {
  type AttemptJob,
  type AttemptKind,
  type AttemptOutcome,
  cancelAsked,
  loopMark,
  parseJob,
  writeOutcome,
} from './attempt-files.ts'
import { noteReviewerGroup, releaseClaim } from './claim.ts'
import { reviewedChange } from './diff.ts'
import { announcedRun, lineReader } from './job-pipe.ts'
import { startingLog } from './launch.ts'
import { type AttemptWatch, type StopReason, silenceMs, watchAttempt } from './watch.ts'

/** What a task hands back: the finished review's document, or the error `review` prints for it. */
export type TaskResult = Pick<AttemptOutcome, 'document' | 'error'>

/** What the worker gives its task for the call: the watch (relay, sessions, watchdog), a log, the group's note. */
export interface WorkerCall {
  watch: AttemptWatch
  log: (line: string) => void
  /** conductReview's onSpawn: the claim learns the reviewer's process group; the watch, that a call started. */
  onSpawn: (pgid: number) => void
  /** Settles once the claim has learnt the group (a safety net: the review goes on without it). */
  noted: () => Promise<void>
  /** The working tree's change against the base, taken while the claim was made (null: the task takes it). */
  change: ReturnType<typeof reviewedChange> | null
}

/** One attempt's work: conduct the review and record it (or its failure) on the run, as `review` did in the foreground. */
export type WorkerTask = (run: RunState, job: AttemptJob, call: WorkerCall) => Promise<TaskResult>

export async function runWorker(
  started: { attempt: string; pgid: number | null },
  tasks: Record<AttemptKind, WorkerTask>,
): Promise<void> {
  const { attempt } = started
  const lines = lineReader(context().io.stdin)
  let line = await lines.next()
  const announced = announcedRun(line)
  // the change is taken while its `review` checks and claims, not after (its writes are caches: harmless unclaimed)
  const early = announced === null ? null : earlyChange(announced)
  if (announced !== null) line = await lines.next()
  lines.close()
  const job = line === null ? null : parseJob(line, attempt)
  if (!job || (announced !== null && job.run_id !== announced)) {
    // its `review` did not claim the run after all (a check failed, or it was killed first): its log goes too
    rmSync(startingLog(context().home, attempt), { force: true })
    await early?.catch(() => {}) // its snapshot's writes end whole
    return
  }
  const runId = job.run_id
  const run = readRun(runId)
  const claim = run.review_claim
  if (claim?.attempt !== attempt || claim.pid !== context().pid) {
    await early?.catch(() => {})
    return // ended before it began (a cancel, a check)
  }

  const watch = watchAttempt(
    runId,
    { attempt, worker_pid: context().pid, worker_pgid: started.pgid },
    {
      silenceMs: silenceMs(),
    },
  )
  // a SIGTERM, SIGINT or SIGHUP (its Context's signal, aborted with the signal's name) ends the reviewer, not the worker
  const signalled = context().io.signal
  const onSignal = () =>
    watch.stop(
      cancelAsked(runId, attempt)
        ? { why: 'cancelled' }
        : { why: 'signal', signal: signalled!.reason as NodeJS.Signals },
    )
  if (signalled?.aborted) onSignal()
  else signalled?.addEventListener('abort', onSignal, { once: true })
  let noted: Promise<void> = Promise.resolve()
  const call: WorkerCall = {
    watch,
    log: (line) => context().io.stderr(`pair-loop review: ${line}\n`),
    onSpawn: (pgid) => {
      watch.started(pgid)
      noted = changeRun(runId, (state) =>
        noteReviewerGroup(state, { pid: context().pid, pgid, start: processStartTime(pgid) }),
      ).catch(() => {})
    },
    noted: () => noted,
    change: early,
  }
  let result: TaskResult
  try {
    result = await tasks[job.kind](run, job, call)
  } catch (caught) {
    const error = toPairLoopError(caught)
    result = { error: { code: error.code, message: error.message, details: error.details } }
  } finally {
    watch.dispose()
    signalled?.removeEventListener('abort', onSignal)
  }
  // whatever happened, the claim does not outlive the worker (recording a result let go of it already)
  let after = readRun(runId)
  if (after.review_claim?.pid === context().pid) {
    await changeRun(runId, (state) => releaseClaim(state, { pid: context().pid })).catch(() => {})
    after = readRun(runId)
  }
  writeOutcome(runId, {
    attempt,
    kind: job.kind,
    mark: loopMark(after),
    at: nowIso(),
    ...result,
  })
}

/** The run's change as its review will see it (the same call conduct makes), begun now; its failure is the call's. */
function earlyChange(runId: string): ReturnType<typeof reviewedChange> {
  preloadLock() // the worker's first lock (the reviewer's group, noted): its code loads while the diff waits on git
  const taken = (async () => {
    const run = readRun(runId)
    const { max_diff_bytes, review_exclude } = configOf(run).pair_loop
    return reviewedChange(run.repo, run.base_sha, max_diff_bytes, undefined, review_exclude ?? [])
  })()
  taken.catch(() => {}) // said by the call that awaits it, or by no one when the job never comes
  return taken
}

/** The failed attempt's code and message when the worker stopped the call itself; null when it did not. */
export function stoppedAs(
  reason: StopReason | null,
  tool: string,
): { kept: string; code: 'interrupted' | 'reviewer_timeout'; message: string } | null {
  if (!reason) return null
  if (reason.why === 'cancelled')
    return { kept: 'cancelled', code: 'interrupted', message: 'the review was cancelled (`pair-loop review --cancel`)' }
  if (reason.why === 'signal')
    return {
      kept: 'interrupted',
      code: 'interrupted',
      message: `the review worker was stopped by ${reason.signal}; the attempt is kept`,
    }
  return {
    kept: 'reviewer_timeout',
    code: 'reviewer_timeout',
    message: `the ${tool} reviewer printed nothing for ${reason.silentS} s; the no-output watchdog ended its process group`,
  }
}
