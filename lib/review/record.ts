// Recording a reviewer round on the run: finding ids and keys, recurrence, and the phase that follows.
import { findingKey, type ParsedFinding } from '../handoff.ts'
import { allFindings } from '../loop.ts'
import type { Finding, ReviewerRound, RunState } from '../state.ts'

export type ReviewInput = Omit<ReviewerRound, 'findings'> & { findings: ParsedFinding[] }

/** Ids `R.N`; a key raised and answered in an earlier round comes back `recurring` with the earlier id. */
export function numberFindings(run: RunState, round: number, parsed: ParsedFinding[]): Finding[] {
  const answeredEarlier = new Map<string, string>()
  for (const earlier of allFindings(run)) {
    if (earlier.round < round && run.replies[earlier.id] && !answeredEarlier.has(earlier.key))
      answeredEarlier.set(earlier.key, earlier.recurring_of ?? earlier.id)
  }
  return parsed.map((finding, index) => {
    const key = findingKey(finding)
    const earlier = answeredEarlier.get(key) ?? null
    return {
      id: `${round}.${index + 1}`,
      round,
      n: index + 1,
      key,
      category: finding.category,
      severity: finding.severity,
      path: finding.path,
      line_start: finding.line_start,
      line_end: finding.line_end,
      text: finding.text,
      recurring: earlier !== null,
      recurring_of: earlier,
    }
  })
}

/** Put the review on the current round and move the phase: approved, capped at max_rounds, or back to coding. */
export function applyReview(run: RunState, input: ReviewInput): RunState {
  const round = run.rounds.at(-1)
  if (!round || run.phase !== 'reviewing') throw new Error(`applyReview needs phase reviewing, got ${run.phase}`)
  round.reviewer = { ...input, findings: numberFindings(run, round.n, input.findings) }
  if (input.fallback_used) run.reviewer_fallback = true
  run.review_claim = null
  run.phase = input.verdict === 'APPROVED' ? 'approved' : run.rounds.length >= run.max_rounds ? 'capped' : 'coding'
  return run
}
