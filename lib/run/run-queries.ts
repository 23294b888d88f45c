// Questions about a run that change nothing: its findings, where it stands, and what the agent should run next.
import {
  type Ask,
  askPrEscalated,
  askPrRoundCap,
  askReviewerFailed,
  askRoundCap,
  askStalemate,
  askWontFixBack,
} from './ask.ts'
import { findingKey, type ParsedFinding } from './grammar.ts'
import { roundApproved } from './gated-review.ts'
import type { ApprovedTree, Finding, RunState } from './state.ts'

export type NextStep = 'coder-done' | 'review' | 'reply' | 'finish' | 'push' | 'pr-check' | 'ask-user' | null

export const isActive = (run: RunState) => run.phase !== 'finished'

export function lastReview(run: RunState) {
  return run.rounds.at(-1)?.reviewer ?? null
}

/**
 * Every tree a review approved, oldest first. A state from before `approved_trees` has its approving review's tree
 * (the last review, when it approved), so an old state file reads as it did.
 */
export function approvedTrees(run: RunState): ApprovedTree[] {
  if (run.approved_trees) return run.approved_trees
  const round = [...run.rounds].reverse().find((each) => each.reviewer) // a round handed over is not reviewed yet
  const review = round?.reviewer
  return review && roundApproved(review) && review.tree
    ? [{ tree: review.tree, round: round!.n, reviewer: review.tool, at: review.at }]
    : []
}

/**
 * The newest tree a review approved: what may ship (the PR head must be it, an older approved tree is not). Null until
 * a review approves, and while the run is neither approved nor closed as APPROVED.
 */
export function approvedTree(run: RunState): string | null {
  if (run.phase !== 'approved' && run.outcome?.verdict !== 'APPROVED') return null
  return approvedTrees(run).at(-1)?.tree ?? null
}

/**
 * A head that is not the newest approved tree: an older approved tree is pushed over with the newest (`push`); bytes
 * no review approved are handed over for review first (`coder-done`). Never a dead end.
 */
export const afterUnapprovedHead = (run: RunState, headTree: string): 'push' | 'coder-done' =>
  approvedTrees(run).some((approved) => approved.tree === headTree) ? 'push' : 'coder-done'

/** The run's PR is open for fixes after an approved finish: rounds from here on are the PR phase's. */
export const inPrPhase = (run: RunState) =>
  run.outcome?.verdict === 'APPROVED' && run.pr !== null && !(run.pr_watch?.pr === run.pr && run.pr_watch.stopped)

/** A round of the PR phase is under way: the run was reopened from `finished` and keeps its outcome meanwhile. */
export const prRoundOpen = (run: RunState) => run.phase !== 'finished' && run.outcome !== null

export const prRounds = (run: RunState) => run.rounds.filter((round) => round.pr_phase).length

/** The PR phase's own round cap (`pr_max_rounds`, default 3), apart from the loop's `max_rounds`. */
export const prMaxRounds = (run: RunState) => run.config?.pair_loop.pr_max_rounds ?? 3

/**
 * The tree the last review saw, before the round under way: where a delta for the next review starts (a PR-phase
 * round's is the newest approved tree). Null when no review recorded a tree.
 */
export function lastReviewedTree(run: RunState): string | null {
  for (const round of [...run.rounds].reverse()) if (round.reviewer?.tree) return round.reviewer.tree
  return null
}

/** The files the last review was shown, as a tree in pair-loop's store: the next round's delta starts there. */
export function lastShownTree(run: RunState): string | null {
  for (const round of [...run.rounds].reverse()) if (round.reviewer?.shown_tree) return round.reviewer.shown_tree
  return null
}

/**
 * An approved run (or one whose PR is open) whose working tree (its snapshot's `tree` now) is not the newest approved
 * one. A review that recorded no tree (a run from before snapshots) saw bytes nobody can name: that is moved too.
 */
export function movedSinceApproval(run: RunState, tree: string | null): boolean {
  if (tree === null) return false
  if (run.phase === 'approved') return lastReview(run)?.tree !== tree
  if (run.phase === 'finished' && inPrPhase(run)) return approvedTree(run) !== tree
  return false
}

/** Findings of the latest review that have no reply yet. */
export function openFindings(run: RunState): Finding[] {
  return (lastReview(run)?.findings ?? []).filter((finding) => !run.replies[finding.id])
}

export function allFindings(run: RunState): Finding[] {
  return run.rounds.flatMap((round) => round.reviewer?.findings ?? [])
}

/** The codes of a failed attempt that count towards "two in a row" (a cancel is the person's own choice). */
const REVIEWER_FAILURES = new Set(['reviewer_failed', 'reviewer_timeout'])

/** Failed reviewer calls of the round under review since it was handed over (a review recorded ends the row). */
export function failuresInARow(run: RunState): number {
  const round = run.rounds.at(-1)
  if (run.phase !== 'reviewing' || !round || round.reviewer) return 0
  return run.failed_reviews.filter(
    (failed) => failed.round === round.n && failed.at >= round.coder.done_at && REVIEWER_FAILURES.has(failed.code),
  ).length
}

/** Open findings of the last review that repeat one the coder answered `wont-fix` in an earlier round. */
export function wontFixBack(run: RunState): string[] {
  const review = run.rounds.at(-1)?.reviewer
  if (!review) return []
  const refused = new Set(
    Object.values(run.replies)
      .filter((reply) => reply.disposition === 'wont-fix')
      .map((reply) => reply.key),
  )
  return review.findings
    .filter((finding) => finding.recurring && !run.replies[finding.id] && refused.has(finding.key))
    .map((finding) => finding.id)
}

/** The next step a failed reviewer call names: `review` (retry once), or the person after the second in a row. */
export function afterFailure(run: RunState, code: string): { next: 'review' | 'ask-user'; ask?: Ask } {
  const row = failuresInARow(run) + (REVIEWER_FAILURES.has(code) ? 1 : 0) // run: the state before this failure
  return row >= 2 ? { next: 'ask-user', ask: askReviewerFailed() } : { next: 'review' }
}

/**
 * The same findings for `stalemate_rounds` reviews in a row (default 2), on files nobody changed in between: the
 * finding keys and how many reviews, or null. Only right after such a review (phase coding): the next round clears it.
 */
export function stalemate(run: RunState): { keys: string[]; rounds: number } | null {
  const reviews = run.rounds.flatMap((round) => (round.reviewer ? [round.reviewer] : []))
  const last = reviews.at(-1)
  if (run.phase !== 'coding' || !last || roundApproved(last) || last.findings.length === 0) return null
  const keys = [...new Set(last.findings.map((finding) => finding.key))]
  let count = 1
  for (let i = reviews.length - 1; i > 0; i--) {
    const unchanged = new Set(reviews[i]!.unchanged_keys ?? [])
    if (!keys.every((key) => unchanged.has(key))) break
    count++
  }
  const needed = run.config?.pair_loop.stalemate_rounds ?? 2
  return count >= needed && count >= 2 ? { keys, rounds: count } : null
}

export function nextStep(run: RunState): NextStep {
  switch (run.phase) {
    case 'coding':
      if (wontFixBack(run).length > 0) return 'ask-user' // the two are not converging: the person decides
      if (stalemate(run)) return 'ask-user' // the same findings on unchanged files: another round will not help
      return openFindings(run).length > 0 ? 'reply' : 'coder-done'
    case 'reviewing':
      if (failuresInARow(run) >= 2) return 'ask-user'
      return 'review' // also while one is in flight: `review` attaches to it and waits, it never calls again
    case 'approved':
      return 'finish'
    case 'capped':
      return 'ask-user'
    case 'finished':
      return prPhaseStep(run)
  }
}

/** Why the run waits for the person, and the command for each answer: with `next: "ask-user"`, else nothing. */
export function askOf(run: RunState): Ask | null {
  if (nextStep(run) !== 'ask-user') return null
  if (run.phase === 'capped') return prRoundOpen(run) ? askPrRoundCap() : askRoundCap()
  if (run.phase === 'reviewing') return askReviewerFailed()
  if (run.phase === 'finished') return askPrEscalated()
  const back = wontFixBack(run)
  return back.length > 0 ? askWontFixBack(back) : askStalemate()
}

/** `next` and, when it is `ask-user`, `ask` beside it: what every document that names the next step carries. */
export const nextFields = (run: RunState): { next: NextStep; ask?: Ask } => {
  const ask = askOf(run)
  return ask ? { next: 'ask-user', ask } : { next: nextStep(run) }
}

/** After the loop, a PR is watched (`pr-check`) until a tick says it is ready for a person or needs one. */
function prPhaseStep(run: RunState): NextStep {
  if (run.pr === null || run.outcome?.verdict === 'ABANDONED') return null
  const watch = run.pr_watch?.pr === run.pr ? run.pr_watch : null
  if (watch?.stopped) return null // the person took the PR over
  // a PR-phase round approved since the last tick: the agent pushes it (pair-loop never pushes), then pr-check
  const newest = run.outcome?.verdict === 'APPROVED' ? approvedTrees(run).at(-1) : undefined
  const newestRound = newest ? run.rounds.find((round) => round.n === newest.round) : undefined
  if (newest && newestRound?.pr_phase && (watch?.last_tick_at ?? '') < newest.at) return 'push'
  const decision = watch?.decision ?? null
  if (decision === 'escalate' && watch?.head_next) return watch.head_next // a head to push, or to hand over first
  return decision === 'escalate' ? 'ask-user' : decision === 'success' ? null : 'pr-check'
}

export const roundsLeft = (run: RunState) =>
  prRoundOpen(run) ? Math.max(0, prMaxRounds(run) - prRounds(run)) : Math.max(0, run.max_rounds - run.rounds.length)

/** The round being worked on: in `coding` it is the next one, otherwise the latest. */
export const currentRound = (run: RunState) =>
  run.phase === 'coding' ? run.rounds.length + 1 : Math.max(1, run.rounds.length)

/** The idempotency key of the coder's reply to a finding (shown in `duplicate_reply`). */
export const replyKey = (run: Pick<RunState, 'run_id'>, findingId: string) => `${run.run_id}:reply:${findingId}`

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
      ...(finding.severity_said ? { severity_said: finding.severity_said } : {}),
      path: finding.path,
      line_start: finding.line_start,
      line_end: finding.line_end,
      text: finding.text,
      recurring: earlier !== null,
      recurring_of: earlier,
      ...(finding.raised_by ? { raised_by: finding.raised_by } : {}),
    }
  })
}

/** When the run's PR was seen merged by `pr-check` (its current PR only), or null. */
export const mergedAt = (run: RunState): string | null =>
  run.pr !== null && run.pr_watch?.pr === run.pr ? run.pr_watch.merged_at : null

/** Every session a reviewer of the run ran under (rounds, re-asks, failed attempts): never the coder's. */
export function reviewerSessionIds(run: RunState): Set<string> {
  const ids = new Set<string>()
  for (const round of run.rounds) {
    for (const id of [round.reviewer?.session_id, ...(round.reviewer?.session_ids ?? [])]) if (id) ids.add(id)
  }
  for (const failed of run.failed_reviews) if (failed.session_id) ids.add(failed.session_id)
  return ids
}
