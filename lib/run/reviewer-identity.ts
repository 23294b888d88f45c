// Who reviewed, shown as what it is: a vendor's CLI (and whether the person's config or start's PATH lookup chose its
// program), a custom command, or a stub shipped with pair-loop. A stub or a command is never shown as codex or claude.
import type { ReviewerKind, ReviewerRound, RunState } from './state.ts'

/** `reviewer_source` of a run: where its reviewer's program came from; null when start found none (or an older run). */
export function reviewerSource(run: Pick<RunState, 'reviewer' | 'reviewer_programs'>): 'config' | 'found at start' | null {
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

/** One line for a person: `codex`, `custom command sh /x/review.sh`, `builtin stub approve`. */
export function reviewerLabel(review: ReviewerShown): string {
  if (review.kind === 'vendor') return review.tool
  const name = review.kind === 'builtin' ? (review.program ?? '').replace(/^.*\//, '').replace(/\.sh$/, '') : review.program
  return review.kind === 'builtin' ? `builtin stub ${name}` : `custom command ${name ?? ''}`.trim()
}

/** The headline's reviewer: the last review's as it was, else the run's choice with where its program came from. */
export function runReviewerLabel(run: Pick<RunState, 'reviewer' | 'reviewer_programs' | 'rounds'>): string {
  const last = run.rounds.findLast((round) => round.reviewer)?.reviewer
  if (last) {
    const shown = reviewerShown(last)
    if (shown.kind !== 'vendor') return reviewerLabel(shown)
  }
  const source = reviewerSource(run)
  return source ? `${last?.tool ?? run.reviewer} (${source})` : (last?.tool ?? run.reviewer)
}
