// Continuity: round N continues the reviewer's own session of the last round while the provider's prompt cache is
// likely warm (`reviewer_resume_s`, default 300 s after that call ended); else a fresh session. Either way the prompt
// leads with the delta since the last reviewed tree (lib/review/prompt.ts).
import type { RunState, Usage } from '../run/state.ts'
import type { ReviewerChoice } from './reviewers.ts'

/**
 * The session to continue: the last review's, when the same CLI (no fallback since) can resume it and its call ended
 * at most `resumeS` seconds before `now`; null for a fresh session.
 */
export function sessionToResume(
  run: Pick<RunState, 'rounds'>,
  choice: Pick<ReviewerChoice, 'tool' | 'kind' | 'fallback_used' | 'resumes'>,
  resumeS: number,
  now: number,
): string | null {
  if (!choice.resumes || choice.kind !== 'vendor' || resumeS <= 0) return null
  const last = [...run.rounds].reverse().find((round) => round.reviewer)?.reviewer
  if (!last?.session_id || last.tool !== choice.tool || last.fallback_used !== choice.fallback_used) return null
  const ended = Date.parse(last.at)
  return Number.isFinite(ended) && now - ended <= resumeS * 1000 ? last.session_id : null
}

/** The last round's record of `session`: its usage as the CLI last reported it (a running total, for codex). */
export function resumeBaseline(run: Pick<RunState, 'rounds'>, session: string): Usage | null {
  const last = [...run.rounds].reverse().find((round) => round.reviewer?.session_id === session)?.reviewer
  return last ? (last.session_usage ?? last.usage ?? null) : null
}

/** What a running total added since `before`, field by field (never below zero). */
export function usageSince(total: Usage, before: Usage): Usage {
  const out = { ...total }
  for (const key of Object.keys(out) as (keyof Usage)[]) out[key] = Math.max((total[key] ?? 0) - (before[key] ?? 0), 0)
  return out
}
