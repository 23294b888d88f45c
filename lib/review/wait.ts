// The foreground's bounded wait on a review attempt (the one it started, or the one in flight it attached to): the
// worker's lines for a person go on to stderr, and the wait ends with the attempt's outcome, or, at `--wait` seconds
// or at a signal, with the in-flight document. A signal ends only the wait: the worker and its paid call go on.
import { closeSync, type FSWatcher, openSync, readSync, watch } from 'node:fs'
import { basename } from 'node:path'
import { context } from '../ground/context.ts'
import { fileSizeOr } from '../ground/fsutil.ts'
import type { ReviewClaim } from '../run/state.ts'
import { readRun } from '../run/store.ts'
import { attemptDir, attemptLogPath, markDelivered, outcomePath, readOutcome, readProgress } from './attempt-files.ts'
import { isHeldElsewhere } from './claim-holder.ts'
import { settleDeadClaim } from './dead-worker.ts'
import { inFlightDocument, outcomeResult, recordedResult } from './documents.ts'

export interface WaitOptions {
  waitS: number
  /** When the command started (epoch ms): the wait is counted from there, checks and start-up included. */
  since?: number
  signal?: AbortSignal
  /** Where the worker's lines for a person go (the command's stderr). */
  stderr: (text: string) => void
  log: (line: string) => void
  /** This `review` started the worker (its lines are shown from the first), rather than attached to it. */
  launched?: boolean
}

const STATE_EVERY_MS = 100
/** After the claim is gone, how long the worker's outcome may take to appear before the run's record is read. */
export const OUTCOME_GRACE_MS = 2_000

export async function awaitAttempt(
  runId: string,
  claim: ReviewClaim,
  options: WaitOptions,
): Promise<Record<string, unknown>> {
  const started = context().now()
  const deadline = (options.since ?? started) + options.waitS * 1000
  const lines = forwarder(attemptLogPath(runId), options.launched === true, options.stderr)
  const changes = watchAttemptFiles(runId)
  try {
    return await waitOn(runId, claim, options, { started, deadline, lines, changes })
  } finally {
    changes.close()
  }
}

async function waitOn(
  runId: string,
  claim: ReviewClaim,
  options: WaitOptions,
  at: { started: number; deadline: number; lines: Forwarder; changes: AttemptChanges },
): Promise<Record<string, unknown>> {
  const { started, deadline, lines, changes } = at
  const attempt = claim.attempt
  let goneAt: number | null = null
  let checkedAt = 0
  for (;;) {
    const outcome = attempt ? readOutcome(runId, attempt) : null
    if (outcome && attempt) {
      lines.flush()
      markDelivered(runId, attempt)
      return outcomeResult(outcome)
    }
    lines.forward()
    const endedBy = options.signal?.aborted ? String(options.signal.reason ?? 'a signal') : null
    const ending = endedBy !== null || context().now() >= deadline
    // the outcome file is looked at on every turn; the run itself (a read and a schema check) ten times a second
    if (ending || context().now() - checkedAt >= STATE_EVERY_MS) {
      checkedAt = context().now()
      const state = readRun(runId)
      const held = state.review_claim
      if (!sameAttempt(held, claim)) {
        // `finish` lets go of the claim while the worker still runs: its outcome comes when its reviewer ends
        const workerRuns = isHeldElsewhere(claim)
        goneAt = workerRuns ? null : (goneAt ?? context().now())
        if ((goneAt !== null && context().now() - goneAt > OUTCOME_GRACE_MS) || (ending && workerRuns)) {
          lines.flush()
          if (attempt) markDelivered(runId, attempt)
          return recordedResult(state, claim)
        }
      } else if (!isHeldElsewhere(held)) {
        // found dead (or it never started): settled, kept as a failed attempt; its outcome is read on the next turn
        await settleDeadClaim(state, { log: options.log })
        continue
      }
      if (ending) {
        lines.flush()
        return inFlightDocument(state, held ?? claim, readProgress(runId, attempt), options.waitS, endedBy)
      }
    }
    const every = changes.watching ? STATE_EVERY_MS : pollMs(context().now() - started)
    await changes.next(Math.min(every, Math.max(1, deadline - context().now())), options.signal)
  }
}

/** Polls `done` every `everyMs` until it holds (true) or `ms` have passed (false). */
export async function pollUntil(done: () => boolean, ms: number, everyMs = 50): Promise<boolean> {
  const deadline = context().now() + ms
  while (!done()) {
    if (context().now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  return true
}

/** The same attempt: by its id (the worker takes the claim over under it), or, for a claim from before ids, by its holder. */
function sameAttempt(held: ReviewClaim | null, claim: ReviewClaim): boolean {
  if (!held) return false
  return claim.attempt ? held.attempt === claim.attempt : held.pid === claim.pid && held.started_at === claim.started_at
}

/** Without a watch: poll fast while a quick review may be ending (a stub answers at once), then a tenth of a second. */
const pollMs = (elapsedMs: number) => (elapsedMs < 1_000 ? 5 : elapsedMs < 5_000 ? 50 : 100)

export interface AttemptChanges {
  /** The attempt's folder is watched: the outcome and the worker's lines wake the wait the moment they are written. */
  watching: boolean
  /** Settles at the next change that matters, after `ms`, or at the signal, whichever comes first. */
  next: (ms: number, signal?: AbortSignal) => Promise<void>
  close: () => void
}

/** The worker's writes that end a turn of the wait early: its outcome (renamed into place) and its log's lines. */
const watchAttemptFiles = (runId: string) =>
  wakeOnWrites(attemptDir(runId), new Set([basename(outcomePath(runId)), basename(attemptLogPath(runId))]))

/** Wake when a file named in `names` is written in `dir`, rather than poll for it (a folder not watchable is polled). */
export function wakeOnWrites(dir: string, names: ReadonlySet<string>): AttemptChanges {
  let wake: (() => void) | null = null
  let watcher: FSWatcher | null = null
  try {
    watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name === null || names.has(String(name))) wake?.()
    })
    watcher.on('error', () => {
      watcher?.close()
      watcher = null
    })
  } catch {
    watcher = null // no such folder yet, or no watching here: polled
  }
  return {
    get watching() {
      return watcher !== null
    },
    next: (ms, signal) =>
      new Promise((resolve) => {
        if (signal?.aborted) return resolve()
        const done = () => {
          wake = null
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          resolve()
        }
        wake = done
        const timer = setTimeout(done, ms)
        signal?.addEventListener('abort', done, { once: true })
      }),
    close: () => watcher?.close(),
  }
}

/**
 * The worker's lines for a person (pair-loop's own: the heartbeat, a re-ask, a warning), passed on whole as they are
 * written; anything else in its log (a crash's stack) stays in the log. From the start, or from now when attaching.
 */
function forwarder(path: string, fromStart: boolean, write: (text: string) => void) {
  let offset = fromStart ? 0 : fileSizeOr(path, 0)
  let pending = ''
  const read = () => {
    const size = fileSizeOr(path, 0)
    if (size <= offset) return
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch {
      return
    }
    try {
      const bytes = Buffer.alloc(Math.min(size - offset, 1024 * 1024))
      const got = readSync(fd, bytes, 0, bytes.length, offset)
      offset += got
      pending += bytes.subarray(0, got).toString('utf8')
    } finally {
      closeSync(fd)
    }
  }
  const forward = () => {
    read()
    const end = pending.lastIndexOf('\n')
    if (end < 0) return
    const whole = pending.slice(0, end + 1)
    pending = pending.slice(end + 1)
    const ours = whole.split('\n').filter((line) => line.startsWith('pair-loop'))
    if (ours.length) write(`${ours.join('\n')}\n`)
  }
  return { forward, flush: forward }
}

type Forwarder = ReturnType<typeof forwarder>
