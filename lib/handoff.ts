// HANDOFF.md: rendered whole from state, with agent text unable to forge its structure; and the reviewer-output parsers.
import { createHash } from 'node:crypto'
import type { Finding, Reply, RunState, Verdict } from './state.ts'
import { stripControl } from './text.ts'

// ---------------------------------------------------------------- neutralising agent text

export { stripControl }

const DECORATION = /^[\s>*_`~+-]*/

/**
 * One line of agent text, escaped so it cannot read as a heading, a finding line or a verdict line
 * (Markdown still shows the same characters: `\#` renders as `#`).
 */
export function neutraliseLine(line: string): string {
  // a line of only `=` or `-` would turn the line above into a heading when rendered (setext)
  if (/^\s*(=+|-+)\s*$/.test(line)) return line.replace(/[=-]/, (mark) => `\\${mark}`)
  if (/^\s*</.test(line)) return line.replace('<', '\\<') // raw HTML (<h2>, <!--) could hide or fake structure
  const lead = DECORATION.exec(line)![0]
  const rest = line.slice(lead.length)
  if (rest.startsWith('#')) return `${lead}\\${rest}`
  const numbered = /^(\d+)([.)])/.exec(rest)
  if (numbered) return `${lead}${numbered[1]}\\${rest.slice(numbered[1]!.length)}`
  const verdict = /^(verdict)([\s*_`]*)(:)/i.exec(rest) // the same decoration parseVerdict tolerates
  if (verdict) return `${lead}${verdict[1]}${verdict[2]}\\${rest.slice(verdict[0].length - 1)}`
  const reply = /^(reply\s*)\(/i.exec(rest) // the shape of a coder's reply under a finding
  if (reply) return `${lead}${reply[1]}\\${rest.slice(reply[1]!.length)}`
  return line
}

export function neutralise(text: string): string {
  const lines = stripControl(text).split('\n').map(neutraliseLine)
  const open = openFence(lines)
  if (open) lines.push(open) // a fence left open would swallow the real headings and verdict that follow
  return lines.join('\n')
}

/** Code fences as CommonMark reads them: a closing fence is the same character, at least as long, and bare. */
const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/

function fenceStep(fence: string | null, line: string): string | null {
  const match = FENCE.exec(line)
  if (!match) return fence
  const marker = match[1]!
  if (fence === null) return marker
  return marker[0] === fence[0] && marker.length >= fence.length && !match[2]!.trim() ? null : fence
}

/** The fence a block of lines leaves open, if any. */
function openFence(lines: string[]): string | null {
  return lines.reduce<string | null>(fenceStep, null)
}

/** For one-line slots (task, finding text): newlines become spaces, then the same escaping. */
export function neutraliseInline(text: string): string {
  return neutraliseLine(
    stripControl(text)
      .replace(/\s*\n\s*/g, ' ')
      .trim(),
  )
}

// ---------------------------------------------------------------- rendering

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
export function renderConversation(run: RunState): string {
  const parts: string[] = []
  for (const round of run.rounds) {
    parts.push(`## Round ${round.n} — CODER (${run.coder}) · ${minuteStamp(round.coder.done_at)}`)
    parts.push(round.coder.summary ? neutralise(round.coder.summary) : '(no summary)')
    parts.push('')
    const review = round.reviewer
    if (!review) continue
    const fallback = review.fallback_used ? ', fallback' : ''
    parts.push(`## Round ${round.n} — REVIEWER (${review.tool}${fallback}) · ${minuteStamp(review.at)}`)
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
    parts.push('')
  }
  return parts.join('\n')
}

export function renderHandoff(run: RunState): string {
  const fallback = run.reviewer_fallback ? ' (fallback used)' : ''
  const lines = [
    `# Pair-Loop Handoff — ${run.run_id}`,
    `Task: ${neutraliseInline(run.task)} · Branch: ${run.branch} · Coder: ${run.coder} · Reviewer: ${run.reviewer}${fallback}`,
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

// ---------------------------------------------------------------- parsing reviewer output

/** Lines of reviewer text that count: outside fenced code blocks and not quoted. */
function liveLines(text: string): string[] {
  const lines: string[] = []
  let fence: string | null = null
  for (const raw of stripControl(text).split('\n')) {
    if (FENCE.test(raw) || fence !== null) {
      fence = fenceStep(fence, raw)
      lines.push('')
      continue
    }
    if (/^\s*>/.test(raw)) {
      lines.push('')
      continue
    }
    lines.push(raw)
  }
  return lines
}

const VERDICT_LINE =
  /^\s*(?:#{1,6}\s*)?[*_`]*\s*verdict\s*[*_`]*\s*:\s*[*_`]*\s*(approved|changes[_ ]requested)\s*[*_`]*\s*\.?\s*$/i

/** The last line that is a verdict on its own wins; a verdict inside a sentence, a quote or a code block does not count. */
export function parseVerdict(text: string): Verdict | null {
  let verdict: Verdict | null = null
  for (const line of liveLines(text)) {
    const match = VERDICT_LINE.exec(line)
    if (match) verdict = match[1]!.toLowerCase() === 'approved' ? 'APPROVED' : 'CHANGES_REQUESTED'
  }
  return verdict
}

export interface ParsedFinding {
  n: number
  category: string
  severity: Finding['severity']
  path: string | null
  line_start: number | null
  line_end: number | null
  text: string
}

const FINDING_LINE = /^\s*[*_]*(\d+)[.)][*_]*\s+\[\s*([^\]/\s][^\]/]*?)\s*(?:\/\s*([A-Za-z]+)\s*)?\]\s*(.*)$/
const LOCATION = /^`?([^\s`]+?):(\d+)(?:-(\d+))?`?\s*(?:—|–|--|-|:)\s*(.*)$/
const SEVERITY_ALIASES: Record<string, Finding['severity']> = {
  blocker: 'blocker',
  critical: 'blocker',
  p0: 'blocker',
  major: 'major',
  high: 'major',
  p1: 'major',
  minor: 'minor',
  medium: 'minor',
  p2: 'minor',
  nit: 'nit',
  low: 'nit',
  trivial: 'nit',
  p3: 'nit',
}

/** Findings in the grammar `N. [category/severity] path:start-end — text`; severity and location optional. */
export function parseFindings(text: string): ParsedFinding[] {
  const findings: ParsedFinding[] = []
  let last: ParsedFinding | null = null
  for (const line of liveLines(text)) {
    const match = FINDING_LINE.exec(line)
    if (match) {
      const [, , category, severity, rest] = match
      const location = LOCATION.exec(rest!.trim())
      last = {
        n: findings.length + 1,
        category: category!.trim().toLowerCase(),
        severity: severity ? (SEVERITY_ALIASES[severity.toLowerCase()] ?? null) : null,
        path: location ? location[1]! : null,
        line_start: location ? Number(location[2]) : null,
        line_end: location ? Number(location[3] ?? location[2]) : null,
        text: (location ? location[4]! : rest!).trim(),
      }
      findings.push(last)
    } else if (last && /^\s{2,}\S/.test(line) && !VERDICT_LINE.test(line)) {
      last.text = `${last.text} ${line.trim()}`.trim() // an indented continuation of the finding above
    } else {
      last = null
    }
  }
  return findings
}

/** What the reviewer said besides findings and the verdict, kept as its summary. */
export function reviewerProse(text: string, maxChars = 4000): string {
  let inFinding = false
  const kept = stripControl(text)
    .split('\n')
    .filter((line) => {
      if (FINDING_LINE.test(line)) {
        inFinding = true
        return false
      }
      if (inFinding && /^\s{2,}\S/.test(line) && !VERDICT_LINE.test(line)) return false // a continuation, already in its finding
      inFinding = false
      return !VERDICT_LINE.test(line) && !/^\s*#{1,6}\s*findings\s*$/i.test(line)
    })
  const prose = kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
  return prose.length > maxChars
    ? `${prose.slice(0, maxChars)}… [${prose.length - maxChars} more characters in the raw output]`
    : prose
}

/** A finding's identity across rounds: category, path and normalised text, never the line number. */
export function findingKey(finding: Pick<ParsedFinding, 'category' | 'path' | 'text'>): string {
  const text = finding.text
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\b\d+\b/g, '#')
    .replace(/[^\p{L}\p{N}#]+/gu, ' ')
    .trim()
  return createHash('sha256')
    .update(`${finding.category.toLowerCase()}\0${finding.path ?? ''}\0${text}`)
    .digest('hex')
    .slice(0, 16)
}
