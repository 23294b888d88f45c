// budget-check --text: the spend by round and role, the tokens by model, and what `complete` means for these figures.
import { cell, DEFAULT_WIDTH, fields, table, valueLines } from './text-layout.ts'
import { unmeasuredText, usd } from './text-views.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

const GAPS = new Set(['missing', 'unreadable', 'unmeasured'])

/** `complete` in words: every figure measured, or why the figures may be low. */
function completeText(doc: Doc): string {
  if (doc.complete && !unmeasuredText(doc.unmeasured)) return 'yes: every figure is measured and priced'
  const why = [
    doc.unpriced_models?.length ? `no price for ${cell(doc.unpriced_models)} (counted as $0)` : null,
    unmeasuredText(doc.unmeasured) ? `not measured: ${unmeasuredText(doc.unmeasured)}` : null,
    (doc.sources as Doc[]).some((s) => GAPS.has(s.status)) ? 'a source is missing (listed below)' : null,
  ].filter(Boolean)
  return `no: the figures may be low${why.length ? ` (${why.join('; ')})` : ''}`
}

/** Is this round's figure for the role a measurement? */
const measured = (doc: Doc, n: number | null, role: string) =>
  n === null
    ? !(doc.unmeasured?.roles as Doc[] | undefined)?.some((r) => r.role === role && r.how === 'none')
    : !(doc.unmeasured?.rounds as Doc[] | undefined)?.some((r) => r.n === n && r.role === role)

/** A role's spend in a row: USD (or not measured), calls, models. */
const spendRow = (doc: Doc, n: number | null, label: string, role: string, spend: Doc) => [
  label,
  role,
  measured(doc, n, role) ? usd(spend.usd) : 'not measured',
  spend.calls === undefined ? '' : `${spend.calls}${spend.failed_calls ? ` (${spend.failed_calls} failed)` : ''}`,
  cell(Object.keys(spend.models ?? {})),
]

export function budgetText(doc: Doc, width = DEFAULT_WIDTH): string {
  const head = fields(
    {
      run: doc.run_id,
      phase: doc.phase,
      level: doc.level ?? 'none (no limit)',
      spent: `${unmeasuredText(doc.unmeasured) ? 'at least ' : ''}${usd(doc.spent)}${
        doc.limit === null ? '' : ` of ${usd(doc.limit)} (warn at ${usd(doc.warn_at)})`
      }`,
      complete: completeText(doc),
      'unpriced models': doc.unpriced_models,
    },
    '',
    width,
  )
  const rows: string[][] = []
  for (const round of doc.rounds as Doc[]) {
    const n = `${round.n}${round.in_progress ? ' (now)' : ''}`
    rows.push(spendRow(doc, round.n, n, 'coder', round.coder), spendRow(doc, round.n, n, 'reviewer', round.reviewer))
  }
  rows.push(
    spendRow(doc, null, 'all', 'coder', doc.by_role.coder),
    spendRow(doc, null, 'all', 'reviewer', doc.by_role.reviewer),
  )
  const byRound = table(['ROUND', 'ROLE', 'USD', 'CALLS', 'MODELS'], rows, '', width)
  const models = Object.entries((doc.by_model ?? {}) as Record<string, Doc>).map(([name, m]) => [
    cell(name),
    cell(m.role),
    usd(m.usd),
    cell(m.tokens?.input ?? 0),
    cell(m.tokens?.output ?? 0),
    cell(m.tokens?.cache_read ?? 0),
    cell((m.tokens?.cache_write_5m ?? 0) + (m.tokens?.cache_write_1h ?? 0)),
  ])
  const byModel = models.length
    ? `\nby model: the tokens each model used and what they cost at its price\n${table(
        ['MODEL', 'ROLE', 'USD', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE'],
        models,
        '  ',
        width,
      )}`
    : ''
  const notes = (doc.sources as Doc[])
    .filter((s) => s.status !== 'read' && s.status !== 'recorded')
    .map((s) =>
      valueLines(`${s.role}${s.round ? ` round ${s.round}` : ''}: ${cell(s.status)}: ${cell(s.why)}`, '  ', width),
    )
  const roles = ((doc.unmeasured?.roles ?? []) as Doc[])
    .filter((r) => r.how === 'none' && !(doc.sources as Doc[]).some((s) => s.role === r.role && GAPS.has(s.status)))
    .map((r) => valueLines(`${cell(r.role)}: ${cell(r.why)}`, '  ', width))
  const gaps = [...roles, ...notes]
  return `${head}\n${byRound}${byModel}${gaps.length ? `\nnot measured\n${gaps.join('')}` : ''}`
}
