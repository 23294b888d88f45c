// The Action's `mode: review` as one PR review: findings inline where their line is in the diff, the rest in the body in
// pair-loop's grammar (so `pr-check` counts them), the marker that makes it a CI reviewer (`pr_action_reviews`), and
// the verdict line last. Pure.
import { neutralise, neutraliseInline } from '../ground/neutralise.ts'
import { PAIR_LOOP_REVIEW_MARKER } from '../run/config.ts'
import type { Finding, Verdict } from '../run/state.ts'
import { commentableLines } from './diff-lines.ts'

export interface ReviewPayload {
  commit_id: string
  event: 'COMMENT'
  body: string
  comments: { path: string; line: number; side: 'RIGHT'; body: string }[]
}

const label = (f: Finding) => `${f.category}${f.severity ? `/${f.severity}` : ''}`
const place = (f: Finding) => (f.path ? ` ${f.path}${f.line_start ? `:${f.line_start}` : ''}` : '')

/** The review GitHub is asked to post on `head`, from the reviewed diff and the review's findings. */
export function reviewPayload(
  review: { verdict: Verdict; tool: string; summary: string; findings: Finding[] },
  diff: string,
  head: string,
): ReviewPayload {
  const lines = commentableLines(diff)
  const inline = review.findings.filter(
    (f) => f.path !== null && f.line_start !== null && lines.get(f.path)?.has(f.line_start),
  )
  const rest = review.findings.filter((f) => !inline.includes(f))
  const said = review.verdict === 'APPROVED' ? 'approves' : 'asks for changes'
  const body = [
    PAIR_LOOP_REVIEW_MARKER,
    `**pair-loop review** · the ${review.tool} reviewer ${said}, run in this repository's CI with its own key.`,
    ...(review.summary.trim() ? ['', neutralise(review.summary.trim())] : []),
    ...(inline.length ? ['', `${inline.length} finding(s) are on the lines they name.`] : []),
    ...(rest.length
      ? ['', ...rest.map((f) => `${f.n}. [${label(f)}]${f.path ? `${place(f)} —` : ''} ${neutraliseInline(f.text)}`)]
      : []),
    '',
    `VERDICT: ${review.verdict}`,
  ].join('\n')
  return {
    commit_id: head,
    event: 'COMMENT',
    body,
    comments: inline.map((f) => ({
      path: f.path!,
      line: f.line_start!,
      side: 'RIGHT',
      body: `**${label(f)}** (pair-loop review, finding ${f.n}): ${neutraliseInline(f.text)}`,
    })),
  }
}
