// How each known review bot writes its verdict, read by its own format: pair-loop's `VERDICT:` line (any review bot),
// CodeRabbit's review header and status notices, GitHub Copilot's review overview, claude-code-action's tracking comment.
// A summary in none of these formats is `unknown`: never a failure or a pending state guessed from its words. Pure.
import { parseFindings, parseVerdict } from '../run/grammar.ts'

export type BotFormat = 'verdict_line' | 'coderabbit' | 'copilot' | 'claude_code_action'

export interface FormatReading {
  format: BotFormat | null
  state: 'complete' | 'in_progress' | 'provider_error' | 'unknown'
  verdict: 'approved' | 'changes' | 'none'
  /** Findings the bot counts (its own count where it gives one; the inline threads carry them). */
  findings_count: number
  /** The bot's must-fix lines (pair-loop's grammar: blocker and major findings, or those without a severity). */
  must_fix: string[]
}

export interface Summary {
  author: string
  body: string
  /** A review's state (`CHANGES_REQUESTED`, …); null for a conversation comment. */
  review_state: string | null
}

const MUST_FIX_MAX = 10
// a bot's login as REST spells it, without `[bot]`, lower case
const loginOf = (author: string) => author.toLowerCase().replace(/\[bot\]$/, '')

const CODERABBIT_ACTIONABLE = /^\s*\*\*Actionable comments posted:\s*(\d+)\s*\*\*\s*$/m
const CODERABBIT_NOTICE = /<!--\s*This is an auto-generated comment:\s*([a-z ]+?)\s+by coderabbit\.ai\s*-->/i
const COPILOT_OVERVIEW =
  /^Copilot reviewed \d+ out of \d+ changed files in this pull request and generated (no comments|(\d+) comments?)\.\s*$/m
const CLAUDE_WORKING = /^\s*\*\*Claude Code is working(…|\.\.\.)/m
const CLAUDE_ERROR = /^\s*\*\*Claude encountered an error/m
const CLAUDE_FINISHED = /^\s*\*\*Claude finished @[A-Za-z0-9-]+'s task/m

/** A summary that is a bot's notice and not a verdict (CodeRabbit's walkthrough): null, so an older verdict stands. */
export function readSummary(summary: Summary): FormatReading | null {
  const line = parseVerdict(summary.body)
  if (line) return verdictLine(summary.body, line)
  const login = loginOf(summary.author)
  if (login === 'coderabbitai') return coderabbit(summary)
  if (login === 'copilot-pull-request-reviewer' || login === 'copilot') return copilot(summary)
  if (login === 'claude' || login === 'github-actions') return claudeCodeAction(summary)
  return unknown()
}

function verdictLine(body: string, line: 'APPROVED' | 'CHANGES_REQUESTED'): FormatReading {
  const findings = parseFindings(body)
  const mustFix = findings
    .filter((f) => f.severity === null || f.severity === 'blocker' || f.severity === 'major')
    .map((f) => `${f.path ? `${f.path}${f.line_start ? `:${f.line_start}` : ''} — ` : ''}${f.text}`)
  return {
    format: 'verdict_line',
    state: 'complete',
    verdict: line === 'APPROVED' ? 'approved' : 'changes',
    findings_count: findings.length,
    must_fix: mustFix.slice(0, MUST_FIX_MAX),
  }
}

function coderabbit(summary: Summary): FormatReading | null {
  const notice = CODERABBIT_NOTICE.exec(summary.body)?.[1]?.toLowerCase()
  if (notice === 'review in progress') return status('coderabbit', 'in_progress')
  if (notice === 'rate limited' || notice === 'review paused') return status('coderabbit', 'provider_error')
  const actionable = CODERABBIT_ACTIONABLE.exec(summary.body)
  if (actionable) {
    const count = Number(actionable[1])
    const approves = count === 0 && summary.review_state !== 'CHANGES_REQUESTED'
    return complete('coderabbit', approves ? 'approved' : 'changes', count)
  }
  if (summary.review_state === 'APPROVED') return complete('coderabbit', 'approved', 0)
  if (notice) return null // the walkthrough and other notices: not a verdict
  return unknown()
}

function copilot(summary: Summary): FormatReading {
  const overview = COPILOT_OVERVIEW.exec(summary.body)
  if (!overview) return unknown()
  const count = overview[2] ? Number(overview[2]) : 0
  return complete('copilot', count === 0 ? 'approved' : 'changes', count)
}

/** claude-code-action's tracking comment says whether it runs or failed; its verdict is a `VERDICT:` line or nothing. */
function claudeCodeAction(summary: Summary): FormatReading {
  if (CLAUDE_WORKING.test(summary.body)) return status('claude_code_action', 'in_progress')
  if (CLAUDE_ERROR.test(summary.body)) return status('claude_code_action', 'provider_error')
  if (CLAUDE_FINISHED.test(summary.body)) return { ...unknown(), format: 'claude_code_action' }
  return unknown()
}

const complete = (format: BotFormat, verdict: 'approved' | 'changes', count: number): FormatReading => ({
  format,
  state: 'complete',
  verdict,
  findings_count: count,
  must_fix: [],
})
const status = (format: BotFormat, state: 'in_progress' | 'provider_error'): FormatReading => ({
  format,
  state,
  verdict: 'none',
  findings_count: 0,
  must_fix: [],
})
const unknown = (): FormatReading => ({
  format: null,
  state: 'unknown',
  verdict: 'none',
  findings_count: 0,
  must_fix: [],
})
