// A review attempt's job (what the detached worker is to do, sent on its stdin) and its files beside the run's state
// (`runs/<id>/review-worker/`): how far it got (progress: the reviewer's output so far, its session, a heartbeat), what
// it ended with (outcome), whether a `review` has printed that outcome yet (delivered), a cancel asked for, and the
// worker's stdout/stderr. Each is written whole (a reader never sees half a file) and read leniently: a missing or
// damaged file is "none".
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { VENDORS } from '../run/vendors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { runArtifactsDir } from '../ground/paths.ts'
import type { RunState } from '../run/state.ts'
import { REVIEWER_TOOLS } from '../run/vendors.ts'

export const ATTEMPT_KINDS = ['round', 'pr'] as const
export type AttemptKind = (typeof ATTEMPT_KINDS)[number]

/** What the worker is to do: the `review` flags that shape the call, and what the foreground already decided. */
export const AttemptJob = v.object({
  /** The run it is for: the worker is started before its `review` has found the run. */
  run_id: v.string(),
  attempt: v.string(),
  kind: v.picklist(ATTEMPT_KINDS),
  reviewer_cmd: v.nullable(v.array(v.string())),
  timeout_s: v.nullable(v.number()),
  /** The person chose to go on at or over the budget (`--over-budget`): recorded on the review. */
  over_budget: v.boolean(),
  /** What is left of the run's limit for a claude reviewer's `--max-budget-usd`; null: no cap. */
  budget_left_usd: v.nullable(v.number()),
  /** `--reviewers`: this round's panel, within the person's `pair_loop.reviewers` (absent: the config's). */
  reviewers: v.optional(v.nullable(v.array(v.picklist(VENDORS))), null),
})

export const MEMBER_STATES = ['running', 'retrying', 'answered', 'failed'] as const
export type MemberState = (typeof MEMBER_STATES)[number]

/** How far the worker got: rewritten as the reviewer prints, and at every tick of its watchdog (the heartbeat). */
export const AttemptProgress = v.object({
  attempt: v.string(),
  worker_pid: v.number(),
  /** The worker's own process group (its session's), ended whole by `review --cancel`. */
  worker_pgid: v.nullable(v.number()),
  tool: v.nullable(v.picklist(REVIEWER_TOOLS)),
  /** Each reviewer call's session, as soon as it is known (named up front, or read from `thread.started`). */
  sessions: v.array(v.string()),
  calls: v.number(),
  output_bytes: v.number(),
  last_output_at: v.nullable(v.string()),
  heartbeat_at: v.string(),
  /** A panel's members, each's state: running, retrying (its first call failed), answered or failed. */
  members: v.optional(v.record(v.string(), v.picklist(MEMBER_STATES))),
})

/** How the attempt ended: the finished review's document, or the error `review` prints for it. */
export const AttemptOutcome = v.object({
  attempt: v.string(),
  kind: v.picklist(ATTEMPT_KINDS),
  /** Where the loop stood once the result was recorded (`loopMark`): the run moved on since when it differs. */
  mark: v.string(),
  at: v.string(),
  document: v.optional(v.record(v.string(), v.unknown())),
  error: v.optional(v.object({ code: v.string(), message: v.string(), details: v.record(v.string(), v.unknown()) })),
})

export type AttemptJob = v.InferOutput<typeof AttemptJob>
export type AttemptProgress = v.InferOutput<typeof AttemptProgress>
export type AttemptOutcome = v.InferOutput<typeof AttemptOutcome>

export const attemptDir = (runId: string) => join(runArtifactsDir(runId), 'review-worker')
export const attemptLogPath = (runId: string) => join(attemptDir(runId), 'worker.log')
const progressPath = (runId: string) => join(attemptDir(runId), 'progress.json')
export const outcomePath = (runId: string) => join(attemptDir(runId), 'outcome.json')
const deliveredPath = (runId: string) => join(attemptDir(runId), 'delivered')
const cancelPath = (runId: string) => join(attemptDir(runId), 'cancel')

/**
 * Where the loop stands, as far as a review's result goes: the phase, the rounds, the reviewer's record, the replies
 * and the failed attempts. A write that is none of these (the ledger's high-water mark) leaves it as it was.
 */
export function loopMark(run: RunState): string {
  const last = run.rounds.at(-1)
  const replies = Object.keys(run.replies).length
  return [
    run.phase,
    run.rounds.length,
    last?.reviewer?.at,
    replies,
    run.failed_reviews.length,
    run.final_review?.review.at,
  ]
    .map((part) => part ?? '')
    .join('|')
}

/** A new attempt claimed: what the previous one left (progress, outcome, a cancel) goes. */
export function clearAttempt(runId: string): void {
  for (const path of [progressPath(runId), outcomePath(runId), deliveredPath(runId), cancelPath(runId)])
    rmSync(path, { force: true })
}

/** The job as the worker reads it from its stdin (null: none, or not for this attempt). */
export function parseJob(text: string, attempt: string): AttemptJob | null {
  try {
    const parsed = v.safeParse(AttemptJob, JSON.parse(text))
    return parsed.success && parsed.output.attempt === attempt ? parsed.output : null
  } catch {
    return null
  }
}

export function writeProgress(runId: string, progress: AttemptProgress): void {
  writeFileAtomic(progressPath(runId), JSON.stringify(progress), 0o600, { durable: false })
}

export const readProgress = (runId: string, attempt: string | null | undefined) =>
  attempt ? readOf(AttemptProgress, progressPath(runId), attempt) : null

/** The newest attempt's progress, whichever attempt it was. */
export const lastProgress = (runId: string) => readOf(AttemptProgress, progressPath(runId), null)

/** What a `review` prints for the attempt (not flushed: were it lost, the run's own record says the same). */
export function writeOutcome(runId: string, outcome: AttemptOutcome): void {
  writeFileAtomic(outcomePath(runId), JSON.stringify(outcome), 0o600, { durable: false })
}

export const readOutcome = (runId: string, attempt: string) => readOf(AttemptOutcome, outcomePath(runId), attempt)

/** The newest attempt's outcome, whichever attempt it was. */
export const lastOutcome = (runId: string) => readOf(AttemptOutcome, outcomePath(runId), null)

/** A `review` printed this attempt's outcome: a later `review` starts anew instead of printing it again. */
export function markDelivered(runId: string, attempt: string): void {
  try {
    writeFileSync(deliveredPath(runId), attempt)
  } catch {} // at worst a later `review` prints the same outcome once more
}

export function isDelivered(runId: string, attempt: string): boolean {
  return readText(deliveredPath(runId)) === attempt
}

/** `review --cancel` asks first, so the worker its SIGTERM reaches knows the person meant it. */
export function askCancel(runId: string, attempt: string): void {
  writeFileSync(cancelPath(runId), attempt)
}

export const cancelAsked = (runId: string, attempt: string) => readText(cancelPath(runId)) === attempt

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/** A file of `schema` for `attempt` (any attempt when null); none when missing, damaged or another attempt's. */
function readOf<S extends v.GenericSchema>(schema: S, path: string, attempt: string | null): v.InferOutput<S> | null {
  const text = readText(path)
  if (text === null) return null
  try {
    const parsed = v.safeParse(schema, JSON.parse(text))
    if (!parsed.success) return null
    const value = parsed.output as { attempt: string }
    return attempt === null || value.attempt === attempt ? (parsed.output as v.InferOutput<S>) : null
  } catch {
    return null
  }
}
