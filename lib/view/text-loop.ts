// The loop's own steps as a person reads them (--text): a review (finished or still running) and finish, in sentences
// and short lines instead of flattened keys.
import { cell, DEFAULT_WIDTH, fields } from './text-layout.ts'
import { askText, costText, findingsTable, usd } from './text-views.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

const VERDICT_WORDS: Record<string, string> = {
  APPROVED: 'approved',
  CHANGES_REQUESTED: 'changes requested',
  ABANDONED: 'abandoned',
}
const verdictWords = (verdict: unknown) => VERDICT_WORDS[String(verdict)] ?? cell(verdict)

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** Who reviewed, how: `codex (fallback), gpt-5.4, 2 calls, 41.2 s, $0.0094`. */
function reviewerText(r: Doc | undefined): string {
  if (!r) return '-'
  const parts = [
    `${cell(r.tool)}${r.fallback_used ? ' (fallback: the configured reviewer was missing)' : ''}`,
    r.model ? cell(r.model) : null,
    r.calls !== undefined ? plural(r.calls, 'call') : null,
    typeof r.duration_ms === 'number' ? `${(r.duration_ms / 1000).toFixed(1)} s` : null,
    r.cost_usd === undefined ? null : r.cost_usd === null ? 'cost not reported' : usd(r.cost_usd),
  ]
  return parts.filter(Boolean).join(', ')
}

/** A panel's members: `claude APPROVED $0.0010; codex CHANGES_REQUESTED $0.0020 (approval: all)`. */
const panelText = (doc: Doc): string =>
  `${(doc.panel as Doc[]).map((m) => `${cell(m.tool)} ${m.verdict ? cell(m.verdict) : `failed (${cell(m.failure?.code)})`} ${m.cost_usd === null ? 'cost not reported' : usd(m.cost_usd)}`).join('; ')} (approval: ${cell(doc.approval)})`

/** `next` with the rounds left, or the person's decision. */
const nextText = (doc: Doc) =>
  doc.next === null || doc.next === undefined
    ? 'nothing: the loop is done'
    : `${cell(doc.next)}${typeof doc.rounds_left === 'number' ? ` (${plural(doc.rounds_left, 'round')} left)` : ''}`

export function reviewText(doc: Doc, width = DEFAULT_WIDTH): string {
  if (doc.in_progress) {
    const lines = fields(
      {
        run: doc.run_id,
        review: `round ${cell(doc.round)}, still running: started ${cell(doc.started_at)}, ${cell(doc.elapsed_s)} s ago`,
        reviewer: doc.reviewer?.tool ? `${cell(doc.reviewer.tool)}, ${plural(doc.reviewer.calls ?? 0, 'call')}` : '-',
        output: `${cell(doc.output?.bytes ?? 0)} bytes so far`,
        next: `review (run it again to wait up to ${cell(doc.wait_s)} s more; it never starts a second call)`,
      },
      '',
      width,
    )
    return lines
  }
  const findings = (doc.findings ?? []) as Doc[]
  const head = fields(
    {
      run: doc.run_id,
      review: `round ${cell(doc.round)}: ${verdictWords(doc.verdict)}, ${plural(findings.length, 'finding')}`,
      'severity gate': doc.severity_gate ? cell(doc.severity_gate.said) : undefined,
      reviewer: reviewerText(doc.reviewer),
      panel: doc.panel ? panelText(doc) : undefined,
      'raw output': doc.reviewer?.raw_output_path,
      'touches its instructions': doc.touches_reviewer_instructions?.length
        ? doc.touches_reviewer_instructions
        : undefined,
      next: nextText(doc),
    },
    '',
    width,
  )
  const ask = doc.ask ? `\n${askText(doc.ask, width)}` : ''
  return `${head}${ask}${findings.length ? `\nfindings\n${findingsTable(findings, '  ', width)}` : ''}`
}

export function finishText(doc: Doc, width = DEFAULT_WIDTH): string {
  return fields(
    {
      run: doc.run_id,
      finished: `${verdictWords(doc.verdict)} after ${plural(doc.rounds ?? 0, 'round')}`,
      cost: costText(doc.cost_usd, doc.unmeasured),
      'PR body': doc.pr_body_path,
      PR:
        doc.pr === null || doc.pr === undefined ? 'none yet' : `#${doc.pr}${doc.pr_url ? ` ${cell(doc.pr_url)}` : ''}`,
      next: doc.next === undefined ? undefined : nextText(doc),
    },
    '',
    width,
  )
}

/** The keys each of these views shows (the rest are laid out below it, so nothing is left out). */
export const LOOP_SHOWN = {
  review: [
    ...['run_id', 'round', 'verdict', 'findings', 'touches_reviewer_instructions', 'reviewer', 'next', 'ask'],
    ...['approved_by', 'severity_gate'],
    ...['rounds_left', 'in_progress', 'started_at', 'elapsed_s', 'wait_s', 'output'],
  ],
  finish: ['run_id', 'verdict', 'rounds', 'cost_usd', 'unmeasured', 'pr_body_path', 'pr', 'pr_url', 'next'],
}
