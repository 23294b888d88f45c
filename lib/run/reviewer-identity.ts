// Who reviewed, shown as what it is: a vendor's CLI (and whether the person's config or start's PATH lookup chose its
// program), a custom command, or a stub shipped with pair-loop. A stub or a command is never shown as codex or claude.
import type { ReviewerKind, ReviewerRound, RunState } from './state.ts'

/** `reviewer_source` of a run: where its reviewer's program came from; null when start found none (or an older run). */
export function reviewerSource(
  run: Pick<RunState, 'reviewer' | 'reviewer_programs'>,
): 'config' | 'found at start' | null {
  return run.reviewer_programs?.[run.reviewer]?.source ?? null
}

export interface ReviewerShown {
  tool: ReviewerRound['tool']
  kind: ReviewerKind
  program: string | null
}

/** What reviewed a round: an older round has no kind, so a custom tool is a command and a CLI a vendor's. */
export function reviewerShown(review: Pick<ReviewerRound, 'tool' | 'kind' | 'program'>): ReviewerShown {
  return {
    tool: review.tool,
    kind: review.kind ?? (review.tool === 'custom' ? 'custom' : 'vendor'),
    program: review.program ?? null,
  }
}

/** Its name for a person: `codex`, `builtin:approve` (a stub of pair-loop), `custom` (a command). */
export function reviewerName(review: ReviewerShown): string {
  if (review.kind === 'vendor') return review.tool
  if (review.kind === 'custom') return 'custom'
  return `builtin:${(review.program ?? '').replace(/^.*\//, '').replace(/\.sh$/, '')}`
}

/**
 * The run's reviewer for a headline: its vendor and where its program came from (`codex (found at start)`), and,
 * when a round was reviewed by something else, what did (`· reviewed by builtin:approve`): never a stub as codex.
 */
export function runReviewerLabel(
  run: Pick<RunState, 'reviewer' | 'reviewer_programs' | 'rounds' | 'final_review'>,
): string {
  const source = reviewerSource(run)
  const reviews = [...run.rounds.map((round) => round.reviewer), run.final_review?.review]
  const others = new Set(
    reviews.flatMap((review) =>
      review && reviewerShown(review).kind !== 'vendor' ? [reviewerName(reviewerShown(review))] : [],
    ),
  )
  return `${run.reviewer}${source ? ` (reviewer_source: ${source})` : ''}${others.size ? ` · reviewed by ${[...others].join(', ')}` : ''}`
}

/** Each review of the run, by round, as what it is (status, verify). */
export function reviewersOf(run: Pick<RunState, 'rounds'>): Array<ReviewerShown & { round: number }> {
  return run.rounds.flatMap((round) => (round.reviewer ? [{ round: round.n, ...reviewerShown(round.reviewer) }] : []))
}
