// The report of one run: its task, where it stands, the rounds as a timeline, and its cost against the budget.
import { fullyMeasured, type Unmeasured, unmeasuredOf } from '../cost/measured.ts'
import type { RunState } from '../run/state.ts'
import { costChart } from './cost-chart.ts'
import { askBanner } from './ask-banner.ts'
import { costTable, roundSpends } from './cost-table.ts'
import { formatUsd } from '../ground/money.ts'
import { formatWhen, verdictLabel } from './format.ts'
import { html, type SafeHtml } from './html.ts'
import { reportPage } from './page.ts'
import type { RunCost } from './run-cost.ts'
import { mergedAt } from '../run/run-queries.ts'
import { timeline } from './timeline.ts'

const firstLine = (text: string) => text.trim().split('\n')[0] ?? ''

/** The PR as a link only when it is a web address of its own (never `javascript:` or a relative path). */
function prFact(run: RunState): SafeHtml | string {
  if (run.pr === null) return 'none'
  const merged = mergedAt(run)
  const state = merged ? ` · merged ${formatWhen(merged)}` : ''
  if (run.pr_url && /^https:\/\/[^\s"'<>]+$/.test(run.pr_url))
    return html`<a class="pr-link" href="${run.pr_url}">#${run.pr}</a>${state}`
  return `#${run.pr}${state}`
}

/** What the run spent, said as measured only when it is: `at least` when a role or round has no figure. */
function spentText(cost: RunCost, unmeasured: Unmeasured | null): string {
  if (!cost.budget) return `not measured (${cost.error})`
  const figure = formatUsd(cost.budget.spent)
  if (fullyMeasured({ complete: cost.budget.ledger.complete, unmeasured: unmeasured! })) return figure
  const missing = unmeasured!.roles.filter((r) => r.how === 'none').map((r) => r.role)
  return `at least ${figure} (${missing.length ? `${missing.join(' and ')} not measured` : 'not every figure could be measured'})`
}

function facts(run: RunState, cost: RunCost, unmeasured: Unmeasured | null): SafeHtml {
  const spent = spentText(cost, unmeasured)
  const limit = cost.budget ? cost.budget.limit : run.budget_usd
  const fallback = run.reviewer_fallback ? ' (fallback: the configured reviewer was missing)' : ''
  const overrides = run.budget_overrides.map(
    (o) => `${o.command} in round ${o.round} at ${formatUsd(o.spent_usd)} of ${formatUsd(o.limit_usd)}`,
  )
  const rows: Array<[string, SafeHtml | string]> = [
    ['Outcome', run.outcome ? `${verdictLabel(run.outcome.verdict)} · ${formatWhen(run.outcome.finished_at)}` : 'open'],
    ['Phase', run.phase],
    ['Rounds', `${run.rounds.length} of at most ${run.max_rounds}`],
    ['Spent', html`<span data-cost="spent" data-usd="${cost.budget ? String(cost.budget.spent) : ''}">${spent}</span>`],
    ['Budget', limit === null ? 'none' : formatUsd(limit)],
    ['Coder', run.coder],
    ['Reviewer', `${run.reviewer}${fallback}`],
    ['Repository', html`<code>${run.repo}</code>`],
    ['Branch', html`<code>${run.branch}</code> from <code>${run.base_sha.slice(0, 12)}</code>`],
    ['Pull request', prFact(run)],
    ['Started', formatWhen(run.created_at)],
    ...(overrides.length ? [['Over budget by choice', overrides.join('; ')] as [string, string]] : []),
  ]
  return html`<dl class="facts">${rows.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>`
}

/** What the ledger could not measure (no transcript with the coder's responses, a reviewer that reported no cost). */
function unmeasuredNote(unmeasured: Unmeasured): SafeHtml | null {
  const roles = unmeasured.roles.map(
    (r) => html`<li>${r.role}: ${r.how === 'none' ? 'not measured' : 'partly measured'} (${r.why})</li>`,
  )
  const rounds = (['coder', 'reviewer'] as const).flatMap((role) => {
    const ns = unmeasured.rounds.filter((r) => r.role === role).map((r) => r.n)
    return ns.length ? [html`<li>${role}, round${ns.length === 1 ? '' : 's'} ${ns.join(', ')}: not measured</li>`] : []
  })
  if (roles.length + rounds.length === 0) return null
  return html`<p class="muted">Not every figure could be measured; those are marked “not measured” and the totals may be low:</p><ul class="muted gaps">${roles}${rounds}</ul>`
}

function costSection(run: RunState, cost: RunCost, unmeasured: Unmeasured | null): SafeHtml {
  if (!cost.budget) return html`<p class="muted">The cost could not be measured: ${cost.error}</p>`
  const rounds = roundSpends(cost.budget, unmeasured!)
  const unpriced = cost.budget.ledger.unpriced_models
  return html`${costChart(rounds, cost.budget.limit, `cost-${run.run_id}`)}
${costTable(rounds, cost.budget, unmeasured!)}
${unpriced.length ? html`<p class="muted">No price for ${unpriced.join(', ')}: counted as $0.</p>` : null}
${unmeasuredNote(unmeasured!)}`
}

export function renderRunReport(run: RunState, cost: RunCost, generatedAt: Date): string {
  const task = run.task.trim()
  const unmeasured = cost.budget ? unmeasuredOf(cost.budget.ledger) : null
  const perRound = cost.budget ? { rounds: cost.budget.ledger.rounds, unmeasured: unmeasured! } : null
  const body = html`<header>
<p class="eyebrow">pair-loop run <code>${run.run_id}</code></p>
<h1>${firstLine(task) || '(no task)'}</h1>
${task.includes('\n') ? html`<div class="task prose">${task}</div>` : null}
</header>
${askBanner(run)}
${facts(run, cost, unmeasured)}
<section aria-labelledby="rounds-heading"><h2 id="rounds-heading">Rounds</h2>${timeline(run, perRound)}</section>
<section aria-labelledby="cost-heading"><h2 id="cost-heading">Cost</h2>${costSection(run, cost, unmeasured)}</section>`
  return reportPage({ title: `${firstLine(task).slice(0, 80)} — pair-loop run ${run.run_id}`, body, generatedAt })
}
