// The reviewer's answer grammar: the text the prompt shows, and reading it back (verdict, findings, prose, keys).
import { FENCE, fenceStep } from '../ground/markdown.ts'
import type { Finding, Verdict } from './state.ts'
import { hexDigest } from '../ground/digest.ts'
import { stripControl } from '../ground/text.ts'

/** What the prompt asks for; the parsers below read exactly this. */
export const GRAMMAR = `List each finding on its own line, numbered from 1:

N. [category/severity] path:line — what is wrong, and what to do about it

- category: one word, e.g. bug, security, performance, concurrency, error-handling, tests, docs, style, maintainability
- severity (optional): blocker, major, minor or nit
- path:line may be path:start-end; leave the location out when the finding is not about one place

Then end your answer with exactly one verdict line, on its own:

VERDICT: APPROVED
or
VERDICT: CHANGES_REQUESTED

APPROVED means nothing is left that must change. Do not put a verdict anywhere else.`

const nullable = (type: string, extra: object = {}) => ({ type: [type, 'null'], ...extra })

/**
 * The structured answer a CLI that can constrain its final answer is asked for (`codex exec --output-schema`,
 * `claude -p --json-schema`): the grammar's verdict and findings as one object. Strict-mode shaped (every key
 * required, no others), so OpenAI's structured outputs accept it; null stands where the grammar allows absence.
 */
export const ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['verdict', 'summary', 'findings'],
  properties: {
    verdict: { type: 'string', enum: ['APPROVED', 'CHANGES_REQUESTED'] },
    summary: { type: 'string', description: 'what you found, in a few sentences' },
    findings: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['category', 'severity', 'path', 'line_start', 'line_end', 'text'],
        properties: {
          category: { type: 'string', description: 'one word, e.g. bug, security, tests, docs' },
          severity: nullable('string', { enum: ['blocker', 'major', 'minor', 'nit', null] }),
          path: nullable('string', { description: 'repository-relative path, or null' }),
          line_start: nullable('integer'),
          line_end: nullable('integer'),
          text: { type: 'string', description: 'what is wrong, and what to do about it' },
        },
      },
    },
  },
} as const

/** What the prompt asks for when the answer is constrained to ANSWER_SCHEMA. */
export const STRUCTURED_GUIDE = `Answer with the JSON object the output schema asks for:

- verdict: APPROVED when nothing is left that must change, else CHANGES_REQUESTED
- summary: what you found, in a few sentences
- findings: one entry per problem (an empty list when there is none), each with
  - category: one word, e.g. bug, security, performance, concurrency, error-handling, tests, docs, style, maintainability
  - severity: blocker, major, minor or nit (null when you can't say)
  - path, line_start, line_end: where it is (null when the finding is not about one place)
  - text: what is wrong, and what to do about it`

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

// markup on either side of the colon, in any run (`**VERDICT:** \`APPROVED\``), a list bullet or a heading before it:
// what the seed's pattern matches on a line of its own. One class, no nested quantifier: linear on any line
const VERDICT_LINE =
  /^\s*(?:[-+*]\s+)?(?:#{1,6}\s*)?[*_`\s]*verdict[*_`\s]*:[*_`\s]*(approved|changes[_ ]requested)[*_`\s]*\.?[*_`\s]*$/i

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
  /** The reviewer's word when it differs from `severity` (`critical`, `p0`, or one no alias covers). */
  severity_said?: string
  path: string | null
  line_start: number | null
  line_end: number | null
  text: string
  /** A panel's merged finding: every member that raised it. */
  raised_by?: Finding['raised_by']
}

const FINDING_LINE = /^\s*[*_]*(\d+)[.)][*_]*\s+\[\s*([^\]/\s][^\]/]*?)\s*(?:\/\s*([A-Za-z]+)\s*)?\]\s*(.*)$/
const LOCATION = /^`?([^\s`]+?):(\d+)(?:-(\d+))?`?\s*(?:—|–|--|-|:)\s*(.*)$/
export const SEVERITY_ALIASES: Record<string, Finding['severity']> = {
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

/** The severity kept (an alias's) and, when the reviewer said it another way, its own word. */
export function severityOf(said: string | null | undefined): Pick<ParsedFinding, 'severity' | 'severity_said'> {
  const word = said?.trim().toLowerCase() ?? ''
  if (!word) return { severity: null }
  const severity = SEVERITY_ALIASES[word] ?? null
  return severity === word ? { severity } : { severity, severity_said: word.slice(0, 40) }
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
        ...severityOf(severity),
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
  return hexDigest(`${finding.category.toLowerCase()}\0${finding.path ?? ''}\0${text}`).slice(0, 16)
}
