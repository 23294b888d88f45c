// A structured reviewer answer (ANSWER_SCHEMA in grammar.ts): checked with valibot, read into the same verdict,
// findings and summary the text grammar gives, so HANDOFF.md and the run record both the same way.
import * as v from 'valibot'
import { VERDICTS, type Verdict } from '../run/state.ts'
import { stripControl } from '../ground/text.ts'
import { type ParsedFinding, severityOf } from '../run/grammar.ts'
import type { ReviewerReply } from '../agents/reply.ts'

const Text = v.pipe(v.string(), v.trim(), v.minLength(1))
const Line = v.nullish(v.pipe(v.number(), v.integer(), v.minValue(0)))

const StructuredFinding = v.object({
  category: Text,
  severity: v.nullish(v.string()),
  path: v.nullish(v.string()),
  line_start: Line,
  line_end: Line,
  text: Text,
})

/** The answer as the schema states it; null only where the grammar allows absence (severity, location, summary). */
export const StructuredAnswer = v.object({
  verdict: v.picklist(VERDICTS),
  summary: v.nullish(v.string()),
  findings: v.nullish(v.array(StructuredFinding)),
})

export interface ReadAnswer {
  verdict: Verdict
  findings: ParsedFinding[]
  summary: string
}

/** One line of agent text: control characters out, runs of whitespace (newlines too) as one space. */
const oneLine = (text: string) => stripControl(text).replace(/\s+/g, ' ').trim()

/** The object a reply carries: Claude's `structured_output`, or a final message that is one JSON object (Codex). */
export function structuredObject(reply: ReviewerReply): unknown {
  if (reply.structured !== undefined) return reply.structured
  const text = reply.text?.trim()
  if (!text?.startsWith('{')) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The verdict, findings and summary of a structured answer, or null when there is none or it is malformed. */
export function readStructured(value: unknown, maxSummaryChars = 4000): ReadAnswer | null {
  const parsed = v.safeParse(StructuredAnswer, value)
  if (!parsed.success) return null
  const { verdict, summary, findings } = parsed.output
  const prose = stripControl(summary ?? '').trim()
  return {
    verdict,
    summary:
      prose.length > maxSummaryChars
        ? `${prose.slice(0, maxSummaryChars)}… [${prose.length - maxSummaryChars} more characters in the raw output]`
        : prose,
    findings: (findings ?? []).map((finding, index) => {
      const severity = severityOf(finding.severity ? oneLine(finding.severity) : null)
      const path = finding.path ? oneLine(finding.path) || null : null
      const start = finding.line_start ?? null
      const end = start === null ? null : Math.max(start, finding.line_end ?? start)
      return {
        n: index + 1,
        category: oneLine(finding.category.replace(/[[\]/]/g, ' ')).toLowerCase() || 'general',
        ...severity,
        path,
        line_start: start,
        line_end: end,
        text: oneLine(finding.text),
      }
    }),
  }
}
