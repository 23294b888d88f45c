// The PR phase's decision layer: a snapshot, what the run kept of the PR, and the time in; the next PR state and the
// tick's result out. Pure: no clock (the caller passes `now`), no network, no disk.
import type { ActionReview } from '../run/config.ts'
import { auditThreads, actionableComments, actionableReviews, type People, peopleOf } from './classify.ts'
import type { PrObserved, PrWatch, Snapshot } from '../run/pr-schema.ts'
import { ciOf, type Reason, threadReasons, verdictReasons } from './reasons.ts'
import { confirmUnconfirmed } from './unconfirmed.ts'
import { answerCommand, type BotVerdict, readBotVerdict } from './verdict.ts'

export type Decision = 'keep_going' | 'success' | 'escalate'

export const MAX_FIX_ATTEMPTS = 5
const WAIT_BASE_S = 60
const WAIT_MAX_S = 900

export interface ReduceContext extends Pick<People, 'bots'> {
  /** `pair_loop.pr_action_reviews`: which `github-actions[bot]` comments are a review (none by default). */
  action_reviews?: readonly ActionReview[]
  now: string
  /** The head's tree (GitHub's) against the approved tree; null: not compared (a replayed snapshot, nothing approved). */
  shipped?: { matches: boolean; paths: string[]; head_tree: string; approved_tree: string } | null
  /** How the run ended when it did not approve (`CHANGES_REQUESTED`, `ABANDONED`): never `success`. */
  not_approved?: string | null
  /** The run's review rounds after the PR opened: each is a fix attempt, pushed or not yet. */
  pr_rounds?: number
}

export function emptyWatch(pr: number): PrWatch {
  return {
    pr,
    ticks: 0,
    last_tick_at: null,
    idle_streak: 0,
    wait_s: WAIT_BASE_S,
    decision: null,
    observed: null,
    merged_at: null,
    closed_at: null,
    fix_attempts: 0,
    answered_keys: [],
    recurring_keys: [],
    finding_streaks: {},
    provider_errors: { head: null, count: 0 },
    replied: {},
    resolved: {},
    unconfirmed: {},
    flagged: {},
    stopped: null,
    last_error: null,
    snapshot_path: null,
  }
}

export function reducePr(snapshot: Snapshot, previous: PrWatch | null, context: ReduceContext) {
  const { now } = context
  const before = previous ?? emptyWatch(snapshot.pr.number)
  const seen = before.observed
  const people = peopleOf(snapshot, context.bots, context.action_reviews)
  const pr = snapshot.pr
  const headSeenAt = seen?.head === pr.head ? seen.head_seen_at : now
  const ci = ciOf(snapshot.checks, headSeenAt, now)
  const flagged = before.flagged ?? {}
  const ownReviews = new Set(
    Object.values(before.replied)
      .filter((record) => record.kind === 'review-findings')
      .map((record) => record.comment_id),
  )
  // answers posted without a comment id: found by their hash they are replies; not found, they did not land
  const unconfirmed = confirmUnconfirmed(snapshot, before.unconfirmed ?? {})
  const replied = { ...before.replied, ...unconfirmed.replied }
  const answeredNow = Object.values(unconfirmed.replied).flatMap((record) => record.finding_keys ?? [])
  const threads = auditThreads(snapshot.threads, people, replied, flagged, ownReviews)
  const conversation = actionableComments(snapshot, people, replied, flagged)
  const reviews = actionableReviews(snapshot, people, replied, flagged)
  const verdict = readBotVerdict(snapshot, people)
  const newVerdict = verdict.identity !== (seen?.verdict_comment ?? null)

  const recurring = newVerdict
    ? verdict.finding_keys.filter((key) => before.answered_keys.includes(key))
    : before.recurring_keys
  const streaks = findingStreaks(before, verdict, newVerdict)
  const repeated = Object.keys(streaks).filter((key) => streaks[key]! >= 1)
  const streak = Math.max(0, ...Object.values(streaks))
  const providerErrors =
    !newVerdict || verdict.state === 'absent'
      ? before.provider_errors
      : verdict.state === 'provider_error'
        ? { head: pr.head, count: (before.provider_errors.head === pr.head ? before.provider_errors.count : 0) + 1 }
        : { head: null, count: 0 }
  const pushedAFix = Boolean(seen?.wanted_changes && seen.head !== pr.head && pr.state === 'OPEN')
  // a fix is counted once: pushed after a tick that wanted changes, or reviewed as a PR-phase round (the larger)
  const fixAttempts = Math.max(before.fix_attempts + (pushedAFix ? 1 : 0), context.pr_rounds ?? 0)

  const answerable = conversation.length + reviews.length
  const verdictApproves = verdict.state === 'complete' && verdict.verdict === 'approved' && verdict.findings_count === 0
  const verdictAsks = verdict.state === 'complete' && !verdictApproves
  const wantedChanges = ci.status === 'fail' || threads.unresolved > 0 || answerable > 0 || verdictAsks
  const fingerprint = JSON.stringify([
    pr.state,
    pr.head,
    pr.mergeable,
    pr.review_decision,
    ci.status,
    threads.unresolved,
    verdict.state,
    verdict.identity,
    threads.actionable.map((t) => t.key),
    threads.stale_unresolved.map((t) => t.id),
    conversation.map((c) => c.key),
    reviews.map((r) => r.key),
    Object.keys(flagged),
  ])
  const changed = seen?.fingerprint !== fingerprint

  const escalations: Reason[] = []
  if (pr.state === 'MERGED') escalations.push({ code: 'pr_merged', detail: 'the PR is merged' })
  if (pr.state === 'CLOSED') escalations.push({ code: 'pr_closed', detail: 'the PR was closed without merging' })
  if (pr.state === 'OPEN' && pr.mergeable === 'CONFLICTING')
    escalations.push({ code: 'merge_conflict', detail: `the PR conflicts with ${pr.base}` })
  const shipped = context.shipped
  if (shipped && !shipped.matches)
    escalations.push({
      code: 'head_not_approved',
      detail: `the head's tree ${shipped.head_tree.slice(0, 12)} is not the approved tree ${shipped.approved_tree.slice(0, 12)}${shipped.paths.length ? ` (${shipped.paths.slice(0, 10).join(', ')})` : ''}: it ships bytes no reviewer approved`,
    })
  if (context.not_approved)
    escalations.push({
      code: 'not_approved',
      detail: `the run ended ${context.not_approved}, not APPROVED: no reviewer approved what this PR ships`,
    })
  if (fixAttempts >= MAX_FIX_ATTEMPTS)
    escalations.push({ code: 'fix_attempts_exhausted', detail: `${fixAttempts} fixes pushed without the PR clearing` })
  if (recurring.length > 0)
    escalations.push({
      code: 'recurrence_after_reply',
      detail: `${recurring.length} finding(s) of the review bot came back after they were answered`,
    })
  if (streak >= STREAK_ESCALATES)
    escalations.push({
      code: 'recurrence_streak',
      detail: `${repeated.filter((key) => streaks[key]! >= STREAK_ESCALATES).length} finding(s) of the review bot listed unanswered on ${STREAK_ESCALATES + 1} verdict runs in a row: the fixes did not clear them`,
    })
  if (providerErrors.count >= 2)
    escalations.push({
      code: 'provider_error_repeated',
      detail: `the review bot failed ${providerErrors.count} times on this head`,
    })

  const reasons: Reason[] = [
    ci.reason,
    ...threadReasons(threads),
    ...(answerable > 0
      ? [
          {
            code: 'comments_unanswered' as const,
            detail: `${answerable} comment(s) or review(s) of a person to answer`,
          },
        ]
      : []),
    ...verdictReasons(verdict),
    ...(pr.state === 'OPEN' && pr.mergeable === 'UNKNOWN'
      ? [{ code: 'mergeable_unknown' as const, detail: 'GitHub has not computed mergeability yet' }]
      : []),
  ]
  // the contract's rule: approved with zero findings, or a verdict that cannot be read (degraded, manual_verify)
  const verdictClears = verdictApproves || verdict.degraded
  const clear =
    pr.state === 'OPEN' &&
    pr.mergeable === 'MERGEABLE' &&
    ci.status === 'pass' &&
    threads.unresolved === 0 &&
    answerable === 0 &&
    verdictClears
  const decision: Decision = escalations.length > 0 ? 'escalate' : clear ? 'success' : 'keep_going'
  if (!changed) reasons.push({ code: 'unchanged', detail: 'nothing changed since the last tick' })

  const idleStreak = changed ? 0 : before.idle_streak + 1
  const waitS = Math.min(WAIT_BASE_S * 2 ** Math.min(idleStreak, 10), WAIT_MAX_S)
  const observed: PrObserved = {
    fingerprint,
    state: pr.state,
    head: pr.head,
    head_seen_at: headSeenAt,
    ci_status: ci.status,
    mergeable: pr.mergeable,
    unresolved: threads.unresolved,
    verdict_state: verdict.state,
    verdict_comment: verdict.identity,
    finding_keys: verdict.finding_keys,
    wanted_changes: wantedChanges,
  }
  const watch: PrWatch = {
    ...before,
    pr: pr.number,
    ticks: before.ticks + 1,
    last_tick_at: now,
    idle_streak: idleStreak,
    wait_s: waitS,
    decision,
    observed,
    merged_at: before.merged_at ?? (pr.state === 'MERGED' ? (pr.merged_at ?? now) : null),
    closed_at: pr.state === 'CLOSED' ? (before.closed_at ?? now) : null,
    fix_attempts: fixAttempts,
    recurring_keys: recurring,
    finding_streaks: streaks,
    provider_errors: providerErrors,
    replied,
    unconfirmed: {},
    answered_keys: [...new Set([...before.answered_keys, ...answeredNow])],
    last_error: null,
  }
  const result = {
    changed,
    decision,
    reasons: [...escalations, ...reasons],
    pr: { ...pr, merged_at: watch.merged_at },
    ci: { status: ci.status, checks: snapshot.checks },
    threads: {
      total: threads.total,
      unresolved: threads.unresolved,
      actionable: threads.actionable,
      stale_unresolved: threads.stale_unresolved,
      skipped_outdated: threads.skipped_outdated,
      own_final_round: threads.own_final_round,
      // every item set aside with pr-flag (threads, comments, reviews): never act on what they ask
      flagged_injection: Object.entries(flagged).map(([key, record]) => ({ key, ...record })),
    },
    conversation: { actionable: conversation },
    reviews: { actionable: reviews },
    verdict: { ...verdict, same_as_last_tick: !newVerdict, answer_with: verdictAsks ? answerCommand(verdict) : null },
    recurrence: {
      recurring_keys: recurring,
      streak,
      repeated_keys: repeated,
      answered_keys: before.answered_keys.length,
      fix_attempts: fixAttempts,
    },
    backoff: { idle_streak: idleStreak, wait_s: waitS, interval_minutes: Math.ceil(waitS / 60) },
    merged: pr.state === 'MERGED',
    // only when a reply posted without a comment id was looked for: which were found, which did not land
    ...(unconfirmed.confirmed.length + unconfirmed.not_found.length > 0
      ? { unconfirmed_replies: { confirmed: unconfirmed.confirmed, not_found: unconfirmed.not_found } }
      : {}),
  }
  return { watch, result }
}

export type PrResult = ReturnType<typeof reducePr>['result']

/** Runs in a row a finding may come back unanswered before the PR escalates (the contract's streak of 2). */
export const STREAK_ESCALATES = 2

/**
 * Each finding key of the bot's last complete verdict run, with how many runs in a row before it listed it with no
 * answer in between (an answered key that comes back is `recurrence_after_reply` instead). Only a new complete run moves
 * it: a notice, a run still in progress or the same summary again keeps the last run's.
 */
function findingStreaks(before: PrWatch, verdict: BotVerdict, newVerdict: boolean): Record<string, number> {
  const previous = before.finding_streaks ?? {}
  if (!newVerdict || verdict.state !== 'complete') return previous
  return Object.fromEntries(
    verdict.finding_keys.map((key) => [
      key,
      key in previous && !before.answered_keys.includes(key) ? previous[key]! + 1 : 0,
    ]),
  )
}
