// The text views (--text) of findings, the code table, every run, and one run's status. Each reads the command's JSON
// document, so text and JSON never say different things; each fits `width` columns.
import { askWhy } from '../run/ask-words.ts'
import { formatUsd } from '../ground/money.ts'
import { cell, DEFAULT_WIDTH, fields, table, valueLines } from './text-layout.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

export const usd = (value: unknown) => formatUsd(value, '-')

/** Where a finding points: `path:line` or `path:start-end`. */
const where = (f: Doc) => {
  const start = f.line_start ?? f.line
  if (!f.path) return '-'
  if (start === null || start === undefined) return cell(f.path)
  return `${cell(f.path)}:${start}${f.line_end && f.line_end !== start ? `-${f.line_end}` : ''}`
}

/** category/severity, and the reviewer's own word beside the severity kept when it said another (`critical`). */
const kind = (f: Doc) => {
  const said = f.severity_said ? ` (${cell(f.severity_said)})` : ''
  return f.severity ? `${cell(f.category)}/${cell(f.severity)}${said}` : `${cell(f.category)}${said}`
}

/** The finding's text, where it came back from, and under it the coder's reply. */
const findingText = (f: Doc) => {
  const again = f.recurring ? ` (again: ${cell(f.recurring_of)})` : ''
  const reply = f.reply ? `\n↳ ${cell(f.reply.disposition)}: ${cell(f.reply.body)}` : ''
  return `${cell(f.text)}${again}${reply}`
}

/** Findings, one a row: id, kind, where, status (open or the reply's disposition), the text and the reply under it. */
export function findingsTable(findings: Doc[], indent = '', width = DEFAULT_WIDTH): string {
  const withStatus = findings.some((f) => 'status' in f)
  const rows = findings.map((f) => [
    cell(f.id),
    kind(f),
    where(f),
    ...(withStatus ? [f.reply ? cell(f.reply.disposition) : 'open'] : []),
    findingText(f),
  ])
  return table(['ID', 'KIND', 'WHERE', ...(withStatus ? ['STATUS'] : []), 'TEXT'], rows, indent, width)
}

export function codesText(doc: Doc, width = DEFAULT_WIDTH): string {
  return table(
    ['CODE', 'EXIT', 'RETRY', 'MEANING'],
    (doc.codes as Doc[]).map((c) => [cell(c.code), cell(c.exit), cell(c.retryable), cell(c.meaning)]),
    '',
    width,
  )
}

/** Where an open run stands, or how a finished one ended. */
const runState = (run: Doc) =>
  run.outcome ? String(run.outcome).toLowerCase().replace('_', '-') : `${cell(run.phase)} ${cell(run.round)}`

/** A path's last part: the repository's folder name (its full path is in the JSON). */
const folder = (path: unknown) => (typeof path === 'string' ? (path.split('/').filter(Boolean).at(-1) ?? path) : '-')

/** Every run in a table, its task on the line below it (a task is too long to share a line with nine columns). */
export function runsText(doc: Doc, width = DEFAULT_WIDTH): string {
  const runs = doc.runs as Doc[]
  const header = ['RUN', 'STARTED', 'REPO', 'STATE', 'NEXT', 'OPEN', 'COST', 'PR']
  const rows = runs.map((run) => [
    cell(run.run_id),
    typeof run.created_at === 'string' ? run.created_at.slice(0, 10) : '-',
    folder(run.repo),
    runState(run),
    cell(run.next),
    cell(run.open_findings),
    run.cost_usd === undefined ? '-' : `${run.measured === false ? '≥' : ''}${usd(run.cost_usd)}`,
    run.pr === null || run.pr === undefined ? '-' : `#${run.pr}${run.merged_at ? ' merged' : ''}`,
  ])
  const lines = table(header, rows, '', width).split('\n')
  let out = `${lines[0]}\n`
  runs.forEach((run, i) => {
    out += `${lines[i + 1]}\n${valueLines(cell(run.task), '  ', width)}`
  })
  if (runs.length === 0) out = '(none)\n'
  const merged = doc.merged_prs as Doc | undefined
  if (merged)
    out += `\n${fields(
      {
        'merged PRs': merged.count,
        'per merged PR':
          merged.usd_per_merged_pr === null
            ? 'none merged yet'
            : `${merged.measured === false ? 'at least ' : ''}${usd(merged.usd_per_merged_pr)}`,
      },
      '',
      width,
    )}`
  const unreadable = doc.unreadable as Doc[]
  if (unreadable.length > 0)
    out += `\nunreadable\n${table(
      ['RUN', 'CODE', 'MESSAGE'],
      unreadable.map((u) => [cell(u.run_id), cell(u.code), cell(u.message)]),
      '  ',
      width,
    )}`
  if (doc.changed !== undefined) out += `\nchanged  ${cell(doc.changed)}\n`
  return out
}

/**
 * The round by the number every view uses (the JSON's `round`, budget-check's `(now)` row): while the coder answers a
 * review's findings that is already the next round, and the note names the review it answers; past the cap, by how much.
 */
export function roundText(doc: Doc): string {
  const round = doc.round
  const answering = doc.phase === 'coding' && (doc.next === 'reply' || doc.ask?.reason === 'wont_fix_recurring')
  const state = answering
    ? `the coder answers round ${cell(round - 1)}'s findings`
    : doc.phase === 'coding'
      ? 'the coder is at work'
      : doc.phase === 'reviewing'
        ? 'under review'
        : null
  const past = round > doc.max_rounds ? `${round - doc.max_rounds} past the cap, by the person's choice` : null
  const notes = [state, past].filter(Boolean).join('; ')
  return `${cell(round)} of ${cell(doc.max_rounds)}${notes ? ` (${notes})` : ''}`
}

/** What was spent, and which roles and rounds have no figure (never shown as a measured $0). */
export function spentText(budget: Doc | undefined): string {
  if (!budget) return '-'
  const limit = budget.limit_usd === null ? ' (no limit)' : ` of ${usd(budget.limit_usd)}`
  return costText(budget.spent_usd, budget.unmeasured, limit)
}

/**
 * A sum a person reads, with what it is out of (`of $1.0000`) after it: `$0.4000`, or `at least $0.4000; not
 * measured: reviewer` when a figure in it is missing.
 */
export function costText(spent: unknown, unmeasured: Doc | undefined, outOf = ''): string {
  const gaps = unmeasuredText(unmeasured)
  return gaps ? `at least ${usd(spent)}${outOf}; not measured: ${gaps}` : `${usd(spent)}${outOf}`
}

/** `coder; reviewer rounds 1, 2` for the roles and rounds of an Unmeasured; empty when every figure is measured. */
export function unmeasuredText(unmeasured: Doc | undefined): string {
  if (!unmeasured) return ''
  const roles = (unmeasured.roles as Doc[]).filter((r) => r.how === 'none').map((r) => cell(r.role))
  const rounds = (['coder', 'reviewer'] as const)
    .filter((role) => !roles.includes(role))
    .flatMap((role) => {
      const ns = (unmeasured.rounds as Doc[]).filter((r) => r.role === role).map((r) => r.n)
      return ns.length ? [`${role} round${ns.length === 1 ? '' : 's'} ${ns.join(', ')}`] : []
    })
  return [...roles, ...rounds].join('; ')
}

/** Why the run waits for the person, and the command for each answer. */
export function askText(ask: Doc, width = DEFAULT_WIDTH): string {
  const choices = (ask.choices as Doc[]).map((c) => [cell(c.say), cell(c.command)])
  return `waiting for you: ${askWhy(cell(ask.reason))}\n${table(['ANSWER', 'COMMAND'], choices, '  ', width)}`
}

export function statusText(doc: Doc, width = DEFAULT_WIDTH): string {
  const out = fields(
    {
      run: doc.run_id,
      phase: doc.phase,
      round: roundText(doc),
      next: doc.next,
      task: doc.task,
      repo: doc.repo,
      branch: doc.branch,
      coder: doc.coder,
      reviewer: `${cell(doc.reviewer)}${doc.reviewer_fallback ? ' (fallback)' : ''}`,
      spent: spentText(doc.budget),
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
    },
    '',
    width,
  )
  const ask = doc.ask ? `\n${askText(doc.ask, width)}` : ''
  const warnings = ((doc.config_warnings ?? []) as Doc[]).map((w) =>
    valueLines(`warning: ${cell(w.message)}`, '', width),
  )
  const open = doc.open_findings as Doc[]
  return `${out}${warnings.join('')}${ask}\nopen findings\n${findingsTable(open, '  ', width)}`
}

export function findingsText(doc: Doc, width = DEFAULT_WIDTH): string {
  return `${fields({ run: doc.run_id, verdict: doc.verdict }, '', width)}\n${findingsTable(doc.findings as Doc[], '', width)}`
}
