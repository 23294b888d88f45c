// The foreground's bounded wait on a review attempt (the one it started, or the one in flight it attached to): the
// worker's lines for a person go on to stderr, and the wait ends with the attempt's outcome, or, at `--wait` seconds
// or at a signal, with the in-flight document. A signal ends only the wait: the worker and its paid call go on.
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import type { ReviewClaim } from '../state.ts'
import { readRun } from '../store.ts'
import { attemptLogPath, markDelivered, readOutcome, readProgress } from './attempt-files.ts'
import { isHeldElsewhere } from './claim-holder.ts'
import { settleDeadClaim } from './dead-worker.ts'
import { inFlightDocument, outcomeResult, recordedResult } from './documents.ts'
import { context } from '../context.ts'

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
const OUTCOME_GRACE_MS = 2_000

export async function awaitAttempt(
  runId: string,
  claim: ReviewClaim,
  options: WaitOptions,
): Promise<Record<string, unknown>> {
  const attempt = claim.attempt
  const started = context().now()
  const deadline = (options.since ?? started) + options.waitS * 1000
  const lines = forwarder(attemptLogPath(runId), options.launched === true, options.stderr)
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
        goneAt ??= context().now()
        if (context().now() - goneAt > OUTCOME_GRACE_MS) {
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
    await pause(Math.min(pollMs(context().now() - started), Math.max(1, deadline - context().now())), options.signal)
  }
}

/** The same attempt: by its id (the worker takes the claim over under it), or, for a claim from before ids, by its holder. */
function sameAttempt(held: ReviewClaim | null, claim: ReviewClaim): boolean {
  if (!held) return false
  return claim.attempt ? held.attempt === claim.attempt : held.pid === claim.pid && held.started_at === claim.started_at
}

/** Poll fast while a quick review may be ending (a stub answers at once), then settle to a tenth of a second. */
const pollMs = (elapsedMs: number) => (elapsedMs < 1_000 ? 5 : elapsedMs < 5_000 ? 50 : 100)

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/**
 * The worker's lines for a person (pair-loop's own: the heartbeat, a re-ask, a warning), passed on whole as they are
 * written; anything else in its log (a crash's stack) stays in the log. From the start, or from now when attaching.
 */
function forwarder(path: string, fromStart: boolean, write: (text: string) => void) {
  let offset = fromStart ? 0 : sizeOf(path)
  let pending = ''
  const read = () => {
    const size = sizeOf(path)
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

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}
