// The PR phase's moves on the run, pure like lib/run/transitions.ts (and, like claims, they never touch the phase): a tick's
// state, an answer claimed then recorded, a resolve recorded, the final round recorded and posted.
import { dropClaim, takeClaim } from '../run/claims.ts'
import { fail } from '../ground/errors.ts'
import type { ReviewerRound, RunState } from '../run/state.ts'
import type { Step } from '../run/store.ts'
import { reopenForFinalRound } from '../run/transitions.ts'
import { gated, roundApproved } from '../run/gated-review.ts'
import { emptyWatch } from './reduce.ts'
import type { PrFlagRecord, PrReplyRecord, PrWatch, SideClaim } from '../run/pr-schema.ts'

/** The PR phase needs a PR on the run (`finish --create-pr`, or `finish --pr N`). */
export function expectPr(run: RunState, command: string): number {
  if (run.pr === null)
    fail(
      'usage',
      `run ${run.run_id} has no PR recorded; open one with \`finish --create-pr\` or record it with \`finish --pr N\` before ${command}`,
      { run_id: run.run_id, next: 'finish' },
    )
  return run.pr
}

/** What the run kept of its PR (a watch of another PR, after `--replace-pr`, starts again). */
export function watchOf(run: RunState): PrWatch | null {
  return run.pr_watch && run.pr_watch.pr === run.pr ? run.pr_watch : null
}

/** A tick's PR state goes on the run. */
export function applyTick<T>(run: RunState, input: { watch: PrWatch; result: T }): Step<T> {
  expectPr(run, 'pr-check')
  if (input.watch.pr !== run.pr)
    fail('usage', `the snapshot is of PR #${input.watch.pr}, but run ${run.run_id} has PR #${run.pr}`, {
      run_id: run.run_id,
      pr: run.pr,
      snapshot_pr: input.watch.pr,
    })
  const next = structuredClone(run)
  next.pr_watch = input.watch
  return { state: next, result: input.result }
}

/** A tick that failed leaves its error on the watch (the rest of the PR state as it was), until one succeeds. */
export function recordTickError(run: RunState, input: { code: string; message: string; at: string }): Step<undefined> {
  const next = structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-check'))
  next.pr_watch = { ...watch, last_error: { code: input.code, message: input.message, at: input.at } }
  return { state: next, result: undefined }
}

/** The claim key of an answer in flight. */
export const answerClaimKey = (key: string) => `pr-reply:${key}`

/**
 * Before posting an answer: a reviewer comment already answered is `duplicate_reply` (with what is recorded); one being
 * answered right now by another call is too (`in_flight`). Otherwise the call claims it.
 */
export function claimAnswer(run: RunState, input: { key: string; claim: SideClaim; heldLive: boolean }): Step<true> {
  const recorded = watchOf(run)?.replied[input.key]
  if (recorded)
    fail('duplicate_reply', `${input.key} is already answered (${recorded.url}); not posting again`, {
      run_id: run.run_id,
      key: input.key,
      recorded,
    })
  const unconfirmed = watchOf(run)?.unconfirmed?.[input.key]
  if (unconfirmed)
    fail(
      'duplicate_reply',
      `${input.key} was posted at ${unconfirmed.at} without GitHub naming the comment (posted_unconfirmed); run \`pair-loop pr-check\` to look for it before posting again`,
      { run_id: run.run_id, key: input.key, posted_unconfirmed: unconfirmed, next: 'pr-check' },
    )
  const step = takeClaim(run, { key: answerClaimKey(input.key), claim: input.claim, heldLive: input.heldLive })
  if (!step.result.taken)
    fail(
      'duplicate_reply',
      `${input.key} is being answered by another call (pid ${step.result.held.pid}); not posting twice`,
      {
        run_id: run.run_id,
        key: input.key,
        in_flight: step.result.held,
      },
    )
  return { state: step.state!, result: true }
}

/** The answer posted: recorded by the comment it answered; the bot's findings it answered are marked answered. */
export function recordAnswer(
  run: RunState,
  input: { key: string; record: PrReplyRecord; pid: number },
): Step<PrReplyRecord> {
  const next = dropClaim(run, { key: answerClaimKey(input.key), pid: input.pid }) ?? structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-reply'))
  const answered = input.record.finding_keys ?? []
  next.pr_watch = {
    ...watch,
    replied: { ...watch.replied, [input.key]: input.record },
    answered_keys: [...new Set([...watch.answered_keys, ...answered])],
  }
  return { state: next, result: input.record }
}

/** An answer GitHub took without naming its comment: kept by its hash until a tick finds it (lib/pr/unconfirmed.ts). */
export function recordUnconfirmed(
  run: RunState,
  input: { key: string; entry: NonNullable<PrWatch['unconfirmed']>[string]; pid: number },
): Step<null> {
  const next = dropClaim(run, { key: answerClaimKey(input.key), pid: input.pid }) ?? structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-reply'))
  next.pr_watch = { ...watch, unconfirmed: { ...watch.unconfirmed, [input.key]: input.entry } }
  return { state: next, result: null }
}

/** A thread GitHub confirmed resolved. */
export function recordResolved(
  run: RunState,
  input: { thread: string; attempts: number; head: string | null; at: string; without_reply?: boolean },
): Step<undefined> {
  const next = structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-resolve'))
  const record = {
    at: input.at,
    attempts: input.attempts,
    head: input.head,
    without_reply: input.without_reply ?? false,
  }
  next.pr_watch = { ...watch, resolved: { ...watch.resolved, [input.thread]: record } }
  return { state: next, result: undefined }
}

/** An item set aside as a suspected prompt injection (pr-flag); flagging it again keeps the first record. */
export function recordFlag(run: RunState, input: { key: string; record: PrFlagRecord }): Step<PrFlagRecord> {
  const next = structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-flag'))
  const flagged = watch.flagged ?? {}
  const kept = flagged[input.key] ?? input.record
  next.pr_watch = { ...watch, flagged: { ...flagged, [input.key]: kept } }
  return { state: next, result: kept }
}

/** A flag taken back (pr-flag --clear): the first of `keys` flagged goes; none flagged changes nothing. */
export function dropFlag(run: RunState, keys: string[]): Step<{ key: string; record: PrFlagRecord } | null> {
  const watch = watchOf(run)
  const key = keys.find((k) => watch?.flagged?.[k])
  if (!watch || !key) return { result: null }
  const next = structuredClone(run)
  const { [key]: record, ...rest } = watch.flagged ?? {}
  next.pr_watch = { ...watch, flagged: rest }
  return { state: next, result: { key, record: record! } }
}

/** The watch of the run's PR ends (pr-stop); stopping it again keeps the first record. */
export function recordStop(
  run: RunState,
  input: { at: string; reason: string | null },
): Step<{ at: string; reason: string | null }> {
  const next = structuredClone(run)
  const watch = watchOf(next) ?? emptyWatch(expectPr(next, 'pr-stop'))
  const stopped = watch.stopped ?? { at: input.at, reason: input.reason }
  next.pr_watch = { ...watch, stopped }
  return { state: next, result: stopped }
}

/**
 * The final round's review (`review --pr`) goes on the run; one that asks for changes opens a coder round like any
 * review's (the run back in coding, its findings to answer with `reply`, the fix handed over and reviewed).
 */
export function recordFinalReview(
  run: RunState,
  input: { review: ReviewerRound; diff_path: string | null; claimKey: string; pid: number; now: string },
): Step<RunState> {
  const next = dropClaim(run, { key: input.claimKey, pid: input.pid }) ?? structuredClone(run)
  const review = gated(next, input.review) // findings all below the run's gate ask for no coder round
  next.final_review = { review, diff_path: input.diff_path }
  if (roundApproved(review)) return { state: next, result: next }
  const reopened = reopenForFinalRound(next, { review, now: input.now }).state!
  return { state: reopened, result: reopened }
}
