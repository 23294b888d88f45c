// HANDOFF.md: rendered whole from state (the source of truth), agent text unable to forge its structure.
import { reviewerName, reviewerShown, runReviewerLabel } from './reviewer-identity.ts'
import { neutralise, neutraliseInline, neutraliseLine } from '../ground/neutralise.ts'
import { openFence } from '../ground/markdown.ts'
import type { Finding, Reply, RunState } from './state.ts'
import { stripControl } from '../ground/text.ts'
import { gateOf } from './gated-review.ts'
import { panelSentence } from './panel-shown.ts'

export const minuteStamp = (iso: string) => `${iso.slice(0, 16)}Z`

export function formatFindingLine(
  finding: Pick<Finding, 'n' | 'category' | 'severity' | 'path' | 'line_start' | 'line_end' | 'text'>,
): string {
  const tag = finding.severity ? `${finding.category}/${finding.severity}` : finding.category
  const range =
    finding.line_end && finding.line_end !== finding.line_start
      ? `${finding.line_start}-${finding.line_end}`
      : `${finding.line_start}`
  const where = finding.path ? `${neutraliseInline(finding.path)}${finding.line_start ? `:${range}` : ''} — ` : ''
  return `${finding.n}. [${neutraliseInline(tag).replace(/[[\]]/g, '')}] ${where}${neutraliseInline(finding.text)}`
}

function renderReply(reply: Reply): string {
  // the first line follows the label (it can't open a fence there); the rest is a block of its own
  const [first = '', ...more] = stripControl(reply.body).split('\n')
  const rest = more.length
    ? neutralise(more.join('\n'))
        .split('\n')
        .map((line) => `   ${line}`)
    : []
  // indenting moves lines across the 3-space fence limit: a fence still open as the document reads it is closed here
  const open = openFence(rest)
  if (open) rest.push(`   ${open}`)
  return [`   reply (${reply.disposition}): ${neutraliseLine(first)}`, ...rest].join('\n')
}

/** The conversation (rounds with replies), shared by HANDOFF.md and the reviewer prompt. */
export function renderConversation(run: RunState, fromRound = 1): string {
  const parts: string[] = []
  for (const round of run.rounds) {
    if (round.n < fromRound) continue // a continued session read the rounds before in its earlier prompts
    const after = round.pr_phase ? ' · after the PR' : '' // a fix in the PR phase, reviewed like any round
    parts.push(`## Round ${round.n} — CODER (${run.coder})${after} · ${minuteStamp(round.coder.done_at)}`)
    parts.push(round.coder.summary ? neutralise(round.coder.summary) : '(no summary)')
    parts.push('')
    const review = round.reviewer
    if (!review) continue
    const fallback = review.fallback_used ? ', fallback' : ''
    parts.push(
      `## Round ${round.n} — REVIEWER (${reviewerName(reviewerShown(review))}${fallback}) · ${minuteStamp(review.at)}`,
    )
    if (review.summary) parts.push(neutralise(review.summary))
    if (review.findings.length) {
      parts.push('### Findings')
      for (const finding of review.findings) {
        const recurring = finding.recurring && finding.recurring_of ? ` (recurring: ${finding.recurring_of})` : ''
        parts.push(formatFindingLine(finding) + recurring)
        const reply = run.replies[finding.id]
        if (reply) parts.push(renderReply(reply))
      }
    }
    parts.push(`VERDICT: ${review.verdict}`)
    const panel = panelSentence(review) // each member's verdict and cost
    if (panel) parts.push(`${panel}.`)
    const gate = gateOf(review, round.n) // the verdict as the reviewer said it, and the rule that approved the round
    if (gate) parts.push(`${capitalised(gate.said)} (${gate.findings.map((finding) => finding.id).join(', ')}).`)
    parts.push('')
  }
  return parts.join('\n')
}

const capitalised = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`

export function renderHandoff(run: RunState): string {
  const fallback = run.reviewer_fallback ? ' (fallback used)' : ''
  const lines = [
    `# Pair-Loop Handoff — ${run.run_id}`,
    `Task: ${neutraliseInline(run.task)} · Branch: ${run.branch} · Coder: ${run.coder} · Reviewer: ${runReviewerLabel(run)}${fallback}`,
    '',
    renderConversation(run),
  ]
  if (run.outcome) {
    lines.push(
      `## Outcome — ${run.outcome.verdict} · ${minuteStamp(run.outcome.finished_at)}${run.pr ? ` · PR #${run.pr}` : ''}`,
      '',
    )
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`
}
