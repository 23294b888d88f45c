// The text views (--text) of the results that are lists: findings, the code table, every run, the budget by round and
// role, one run's status. Each reads the command's JSON document, so text and JSON never say different things.
import { cell, fields, table, usd } from './text-layout.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

/** Where a finding points: `path:line` or `path:start-end`. */
const where = (f: Doc) => {
  const start = f.line_start ?? f.line
  if (!f.path) return '-'
  if (start === null || start === undefined) return cell(f.path)
  return `${cell(f.path)}:${start}${f.line_end && f.line_end !== start ? `-${f.line_end}` : ''}`
}

const kind = (f: Doc) => (f.severity ? `${cell(f.category)}/${cell(f.severity)}` : cell(f.category))

/** Findings, one a line: id, kind, where, status (open or the reply's disposition), text. */
export function findingsTable(findings: Doc[], indent = ''): string {
  const rows = findings.map((f) => [
    cell(f.id),
    kind(f),
    where(f),
    f.reply ? cell(f.reply.disposition) : f.status === undefined ? '' : 'open',
    `${cell(f.text)}${f.recurring ? ` (again: ${cell(f.recurring_of)})` : ''}`,
  ])
  const withStatus = findings.some((f) => 'status' in f)
  const header = ['ID', 'KIND', 'WHERE', ...(withStatus ? ['STATUS'] : []), 'TEXT']
  return table(
    header,
    rows.map((row) => (withStatus ? row : [...row.slice(0, 3), row[4]!])),
    indent,
  )
}

export function codesText(doc: Doc): string {
  return table(
    ['CODE', 'EXIT', 'RETRY', 'MEANING'],
    (doc.codes as Doc[]).map((c) => [cell(c.code), cell(c.exit), cell(c.retryable), cell(c.meaning)]),
  )
}

export function runsText(doc: Doc): string {
  const rows = (doc.runs as Doc[]).map((run) => [
    cell(run.run_id),
    cell(run.phase),
    cell(run.round),
    cell(run.next),
    cell(run.open_findings),
    cell(run.outcome),
    cell(run.pr),
    cell(run.task),
  ])
  let out = table(['RUN', 'PHASE', 'ROUND', 'NEXT', 'OPEN', 'OUTCOME', 'PR', 'TASK'], rows)
  const unreadable = doc.unreadable as Doc[]
  if (unreadable.length > 0)
    out += `\nunreadable\n${table(
      ['RUN', 'CODE', 'MESSAGE'],
      unreadable.map((u) => [cell(u.run_id), cell(u.code), cell(u.message)]),
      '  ',
    )}`
  if (doc.changed !== undefined) out += `\nchanged  ${cell(doc.changed)}\n`
  return out
}

export function statusText(doc: Doc): string {
  const out = fields({
    run: doc.run_id,
    phase: doc.phase,
    round: `${cell(doc.round)} of ${cell(doc.max_rounds)} (${cell(doc.rounds_left)} left)`,
    next: doc.next,
    task: doc.task,
    repo: doc.repo,
    branch: doc.branch,
    coder: doc.coder,
    reviewer: `${cell(doc.reviewer)}${doc.reviewer_fallback ? ' (fallback)' : ''}`,
    spent: `${usd(doc.budget?.spent_usd)}${doc.budget?.limit_usd === null ? ' (no limit)' : ` of ${usd(doc.budget?.limit_usd)}`}`,
    replies: doc.replies,
    'review running': doc.review_in_progress,
    'failed reviews': doc.failed_reviews,
    outcome: doc.outcome ? `${cell(doc.outcome.verdict)} at ${cell(doc.outcome.finished_at)}` : null,
    pr: doc.pr_url ?? doc.pr,
    handoff: doc.handoff_path,
    state: doc.state_path,
    'config changed': doc.config_changed,
    updated: doc.updated_at,
    changed: doc.changed,
  })
  const open = doc.open_findings as Doc[]
  return `${out}\nopen findings\n${findingsTable(open, '  ')}`
}

const TOKEN_COLUMNS = ['input', 'output', 'cache_read', 'cache_write_5m', 'cache_write_1h'] as const

/** A role's spend in a row: USD, tokens by kind, models. */
const spendRow = (label: string[], spend: Doc) => [
  ...label,
  usd(spend.usd),
  ...TOKEN_COLUMNS.map((kind) => cell(spend.tokens?.[kind] ?? 0)),
  spend.calls === undefined ? '' : `${spend.calls}${spend.failed_calls ? ` (${spend.failed_calls} failed)` : ''}`,
  cell(Object.keys(spend.models ?? {})),
]

export function budgetText(doc: Doc): string {
  const head = fields({
    run: doc.run_id,
    phase: doc.phase,
    level: doc.level ?? 'no limit',
    spent: doc.limit === null ? usd(doc.spent) : `${usd(doc.spent)} of ${usd(doc.limit)} (warn at ${usd(doc.warn_at)})`,
    complete: doc.complete,
    'unpriced models': doc.unpriced_models,
  })
  const header = ['ROUND', 'ROLE', 'USD', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE 5M', 'CACHE 1H', 'CALLS', 'MODELS']
  const rows: string[][] = []
  for (const round of doc.rounds as Doc[]) {
    const n = `${round.n}${round.in_progress ? ' (now)' : ''}`
    rows.push(spendRow([n, 'coder'], round.coder), spendRow([n, 'reviewer'], round.reviewer))
  }
  rows.push(spendRow(['all', 'coder'], doc.by_role.coder), spendRow(['all', 'reviewer'], doc.by_role.reviewer))
  const notes = (doc.sources as Doc[])
    .filter((s) => s.status !== 'read' && s.status !== 'recorded')
    .map((s) => `  ${s.role}${s.round ? ` round ${s.round}` : ''}: ${cell(s.status)}: ${cell(s.why)}\n`)
  return `${head}\n${table(header, rows)}${notes.length ? `\nnot measured\n${notes.join('')}` : ''}`
}

export function findingsText(doc: Doc): string {
  return `${fields({ run: doc.run_id, verdict: doc.verdict })}\n${findingsTable(doc.findings as Doc[])}`
}

/** The keys of a document each view shows (the rest are laid out below it, so nothing is left out). */
export const SHOWN: Record<string, string[]> = {
  codes: ['codes'],
  runs: ['runs', 'unreadable', 'changed'],
  status: [
    ...['run_id', 'phase', 'round', 'max_rounds', 'rounds_left', 'next', 'task', 'repo', 'branch', 'coder'],
    ...['reviewer', 'reviewer_fallback', 'budget', 'replies', 'review_in_progress', 'failed_reviews', 'outcome'],
    ...['pr', 'pr_url', 'handoff_path', 'state_path', 'config_changed', 'updated_at', 'changed', 'open_findings'],
    'revision', // a counter for machines
  ],
  budget: [
    ...['run_id', 'phase', 'level', 'spent', 'limit', 'warn_at', 'complete', 'unpriced_models', 'rounds'],
    ...['by_role', 'sources'],
  ],
  findings: ['run_id', 'verdict', 'findings'],
}
