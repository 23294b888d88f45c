// The reasons a PR tick gives, in the closed set of codes the helper contract names: CI, threads, the bot's verdict.
import type { auditThreads } from './classify.ts'
import type { Snapshot } from '../run/pr-schema.ts'
import type { BotVerdict } from './verdict.ts'

/** The closed set of `reasons[].code`; escalations come first in a result. */
export const REASON_CODES = [
  'head_not_approved',
  'not_approved',
  'pr_merged',
  'pr_closed',
  'merge_conflict',
  'fix_attempts_exhausted',
  'recurrence_after_reply',
  'recurrence_streak',
  'provider_error_repeated',
  'ci_failed',
  'ci_pending',
  'ci_pass',
  'threads_unresolved',
  'threads_stale_unresolved',
  'threads_clear',
  'comments_unanswered',
  'review_changes',
  'review_in_progress',
  'review_approved',
  'review_absent',
  'review_unknown_format',
  'provider_error',
  'manual_verify',
  'mergeable_unknown',
  'unchanged',
] as const
export type ReasonCode = (typeof REASON_CODES)[number]
export interface Reason {
  code: ReasonCode
  detail: string
}

/** A PR with no check at all is pending this long after its head was first seen (checks register late), then passes. */
export const NO_CHECKS_GRACE_MS = 10 * 60_000

export function ciOf(checks: Snapshot['checks'], headSeenAt: string, now: string) {
  const failed = checks.filter((check) => check.status === 'fail')
  const pending = checks.filter((check) => check.status === 'pending')
  const names = (list: typeof checks) => list.map((check) => check.name).join(', ')
  if (failed.length > 0)
    return {
      status: 'fail' as const,
      reason: {
        code: 'ci_failed' as const,
        detail: `${failed.length} of ${checks.length} check(s) failed: ${names(failed)}`,
      },
    }
  if (pending.length > 0)
    return {
      status: 'pending' as const,
      reason: { code: 'ci_pending' as const, detail: `${pending.length} check(s) still running: ${names(pending)}` },
    }
  if (checks.length === 0) {
    const waited = Date.parse(now) - Date.parse(headSeenAt)
    if (waited < NO_CHECKS_GRACE_MS)
      return { status: 'pending' as const, reason: { code: 'ci_pending' as const, detail: 'no check reported yet' } }
    return {
      status: 'pass' as const,
      reason: { code: 'ci_pass' as const, detail: `no check reported for ${NO_CHECKS_GRACE_MS / 60_000} minutes` },
    }
  }
  return { status: 'pass' as const, reason: { code: 'ci_pass' as const, detail: `${checks.length} check(s) passed` } }
}

export function threadReasons(threads: ReturnType<typeof auditThreads>): Reason[] {
  if (threads.unresolved === 0) return [{ code: 'threads_clear', detail: 'no unresolved review thread' }]
  const reasons: Reason[] = []
  if (threads.actionable.length > 0)
    reasons.push({ code: 'threads_unresolved', detail: `${threads.actionable.length} thread(s) to answer` })
  if (threads.stale_unresolved.length > 0)
    reasons.push({
      code: 'threads_stale_unresolved',
      detail: `${threads.stale_unresolved.length} answered thread(s) not resolved`,
    })
  return reasons
}

export function verdictReasons(verdict: BotVerdict): Reason[] {
  const who = verdict.author ?? 'the review bot'
  const manualVerify = {
    code: 'manual_verify' as const,
    detail: 'no review bot verdict could be read: look at the PR yourself before calling it ready',
  }
  switch (verdict.state) {
    case 'absent':
      return [{ code: 'review_absent', detail: 'no review bot has posted a summary' }, manualVerify]
    case 'in_progress':
      return [{ code: 'review_in_progress', detail: `${who} is still reviewing` }]
    case 'provider_error':
      return [{ code: 'provider_error', detail: `${who} reported an error instead of a verdict` }]
    case 'unknown':
      return [
        { code: 'review_unknown_format', detail: `${who}'s latest summary is in no format pair-loop reads` },
        manualVerify,
      ]
    case 'complete':
      if (verdict.verdict === 'approved' && verdict.findings_count === 0)
        return [{ code: 'review_approved', detail: `${who} approved with zero findings` }]
      return [
        {
          code: 'review_changes',
          detail:
            verdict.verdict === 'approved'
              ? `${who} approved but lists ${verdict.findings_count} finding(s)`
              : `${who} asks for changes (${verdict.findings_count} finding(s))`,
        },
      ]
  }
}
