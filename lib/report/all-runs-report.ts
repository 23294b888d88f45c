// The report of every run: what they add up to (approval rate, dollars per approved run and per merged PR), a table
// linking each run's page, and the trend of cost and rounds across runs.
import { basename } from 'node:path'
import { fullyMeasured, unmeasuredOf } from '../cost/measured.ts'
import type { RunState } from '../run/state.ts'
import { formatUsd } from '../ground/money.ts'
import { formatPercent, formatWhen, verdictLabel } from './format.ts'
import { type RunFigures, runFigures, type Summary, summarise } from './figures.ts'
import { html, type SafeHtml } from './html.ts'
import { reportPage } from './page.ts'
import type { RunCost } from './run-cost.ts'
import { trendChart } from './trend-chart.ts'
import { scrolling, usdCell } from './cost-table.ts'

export type ReportEntry =
  | { run: RunState; cost: RunCost }
  | { unreadable: { run_id: string; code: string; message: string } }

function summaryList(s: Summary): SafeHtml {
  const item = (term: string, value: string, note: string, key: string) =>
    html`<div data-figure="${key}"><dt>${term}</dt><dd>${value}<small>${note}</small></dd></div>`
  const rate = s.approval_rate === null ? '—' : formatPercent(s.approval_rate)
  const ended = s.ended + s.same_vendor.ended
  const spent = s.unmeasured ? `at least ${formatUsd(s.spent)}` : formatUsd(s.spent)
  // a ratio over ended runs of which one is not fully measured may be low, as the sum is
  const ratio = (usd: number | null) =>
    usd !== null && s.ended_unmeasured ? `at least ${formatUsd(usd)}` : formatUsd(usd)
  const measured = s.unmeasured
    ? `${s.unmeasured} run${s.unmeasured === 1 ? '' : 's'} not fully measured`
    : 'every run measured'
  const sameVendor = s.same_vendor.runs
    ? item(
        'Same-vendor runs',
        String(s.same_vendor.runs),
        `reviewed by the coder’s own vendor (a fallback): ${s.same_vendor.approved} approved, ${formatUsd(s.same_vendor.spent)}; in Spent only`,
        'same-vendor',
      )
    : null
  return html`<dl class="summary">
${item('Runs', String(s.runs), `${ended} ended, ${s.runs - ended} still open`, 'runs')}
${item('Approval rate', rate, `${s.approved} of ${s.ended} ended runs approved`, 'approval-rate')}
${item('Rounds to approval', s.mean_rounds_to_approval === null ? '—' : s.mean_rounds_to_approval.toFixed(1), 'mean, over approved runs', 'rounds-to-approval')}
${item('Spent', spent, measured, 'spent')}
${item('Per approved run', ratio(s.usd_per_approved), 'ended runs’ spend ÷ approved runs', 'usd-per-approved')}
${item('Per merged PR', ratio(s.usd_per_merged), s.merged ? `ended runs’ spend ÷ ${s.merged} merged` : 'no merged PR recorded yet', 'usd-per-merged')}
${sameVendor}
</dl>`
}

/** A run's page, written beside this one by `report --all`. */
export const runPageName = (runId: string) => `${runId}.html`

function row(run: RunState, cost: RunCost, figures: RunFigures): SafeHtml {
  const outcome = run.outcome ? verdictLabel(run.outcome.verdict) : `open (${run.phase})`
  const pr = run.pr === null ? '—' : `#${run.pr}${figures.merged ? ' merged' : ''}`
  const none = cost.budget ? unmeasuredOf(cost.budget.ledger).roles.filter((r) => r.how === 'none').length : 2
  const measured = none === 2 ? 'no' : figures.measured ? 'yes' : 'partly'
  const vendor = figures.cross_vendor ? null : html` <span class="muted">(same vendor)</span>`
  return html`<tr data-run="${run.run_id}">
<th scope="row"><a href="${runPageName(run.run_id)}"><code>${run.run_id}</code></a></th>
<td data-label="Started" class="when-cell" title="${formatWhen(run.created_at)}"><span class="date">${run.created_at.slice(0, 10)}</span> ${run.created_at.slice(11, 16)}</td>
<td data-label="Repository" class="repo-cell" title="${run.repo}"><code>${basename(run.repo) || run.repo}</code></td>
<td data-label="Task" class="task-cell">${run.task.trim().split('\n')[0] ?? ''}</td>
<td data-label="Outcome">${outcome}${vendor}</td>
<td data-label="Rounds" class="num">${run.rounds.length}</td>
<td data-label="To approval" class="num">${figures.rounds_to_approval ?? '—'}</td>
${usdCell(cost.budget ? cost.budget.spent : null, 'spent', measured, 'Cost', '≥ ')}
<td data-label="PR">${pr}</td>
</tr>`
}

/** Runs listed one by one (table and chart): a page a browser opens at once even with 10,000 runs in the home. */
export const LISTED_RUNS = 200

/** The runs of each month (by when they started), newest first: what the runs not listed one by one add up to. */
function monthsTable(runs: { run: RunState }[], figures: RunFigures[]): SafeHtml {
  const months = new Map<string, RunFigures[]>()
  runs.forEach(({ run }, i) => {
    const month = run.created_at.slice(0, 7)
    const of = months.get(month) ?? []
    of.push(figures[i]!)
    months.set(month, of)
  })
  const rows = [...months].map(([month, of]) => {
    const s = summarise(of)
    const rate = s.approval_rate === null ? '—' : formatPercent(s.approval_rate)
    return html`<tr data-month="${month}"><th scope="row">${month}</th><td class="num">${s.runs}</td><td class="num">${s.ended}</td><td class="num">${rate}</td><td class="num">${formatUsd(s.spent)}</td><td class="num">${formatUsd(s.usd_per_approved)}</td></tr>`
  })
  return html`<table class="months-table">
<caption>Every run by month</caption>
<thead><tr><th scope="col">Month</th><th scope="col" class="num">Runs</th><th scope="col" class="num">Ended</th><th scope="col" class="num">Approval rate</th><th scope="col" class="num">Spent</th><th scope="col" class="num">Per approved run</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}

/** A run's figures, its cost measured only when every figure of its ledger is a measurement. */
const figuresOf = ({ run, cost }: { run: RunState; cost: RunCost }) =>
  runFigures(run, {
    spent: cost.budget ? cost.budget.spent : null,
    measured: cost.budget
      ? fullyMeasured({ complete: cost.budget.ledger.complete, unmeasured: unmeasuredOf(cost.budget.ledger) })
      : false,
  })

export function renderAllRunsReport(entries: ReportEntry[], generatedAt: Date): string {
  const all = entries
    .flatMap((e) => ('run' in e ? [e] : []))
    .sort((x, y) => y.run.created_at.localeCompare(x.run.created_at)) // newest first, by when each started
  const allFigures = all.map(figuresOf)
  // the totals count every run; only the newest are listed one by one, the rest by month
  const runs = all.slice(0, LISTED_RUNS)
  const figures = allFigures.slice(0, LISTED_RUNS)
  const cut = all.length > runs.length
  const allUnreadable = entries.flatMap((e) => ('unreadable' in e ? [e.unreadable] : []))
  const unreadable = allUnreadable.slice(0, LISTED_RUNS)
  const trend = runs.flatMap(({ run, cost }, i) =>
    cost.budget
      ? [
          {
            run_id: run.run_id,
            created_at: run.created_at,
            coder: cost.budget.ledger.by_role.coder.usd,
            reviewer: cost.budget.ledger.by_role.reviewer.usd,
            rounds: run.rounds.length,
            measured: figures[i]!.measured,
          },
        ]
      : [],
  )
  const head = ['Run', 'Started', 'Repository', 'Task', 'Outcome', 'Rounds', 'To approval', 'Cost', 'PR']
  const numeric = new Set(['Rounds', 'To approval', 'Cost'])
  const body = html`<header><p class="eyebrow">pair-loop report</p><h1>Every run</h1></header>
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Summary</h2>${summaryList(summarise(allFigures))}
<p class="muted">Rates and dollars per outcome count the cross-vendor runs whose loop has ended (approved, capped or finished); a run counts as approved when it is approved or finished as approved, and as merged once its PR's merge is recorded. Runs reviewed by the coder's own vendor are counted apart.</p></section>
<section aria-labelledby="runs-heading"><h2 id="runs-heading">Runs</h2>
${
  runs.length === 0
    ? html`<p class="muted">No run yet.</p>`
    : scrolling(html`<table class="runs-table reflow">
<caption>${cut ? `The ${runs.length} newest of ${all.length} runs` : 'Every run, newest first'}; each links to its page</caption>
<thead><tr>${head.map((h) => html`<th scope="col"${numeric.has(h) ? html` class="num"` : null}>${h}</th>`)}</tr></thead>
<tbody>${runs.map(({ run, cost }, i) => row(run, cost, figures[i]!))}</tbody>
</table>`)
}
${trendChart(trend)}
${cut ? html`<p class="muted">The ${all.length - runs.length} older runs are counted in the summary and by month below; each has its page (<code>pair-loop report --run ID</code>).</p>${monthsTable(all, allFigures)}` : null}
</section>
${unreadable.length ? html`<section aria-labelledby="unreadable-heading"><h2 id="unreadable-heading">Unreadable runs</h2><ul>${unreadable.map((u) => html`<li><code>${u.run_id}</code>: ${u.code}: ${u.message}</li>`)}</ul>${allUnreadable.length > unreadable.length ? html`<p class="muted">and ${allUnreadable.length - unreadable.length} more (<code>pair-loop status --all</code> lists them all)</p>` : null}</section>` : null}`
  return reportPage({ title: 'Every run — pair-loop report', body, generatedAt })
}

/** The runs `report --all` lists one by one, newest first: the ones whose pages it writes beside it. */
export function listedRuns(entries: ReportEntry[]): Array<{ run: RunState; cost: RunCost }> {
  return entries
    .flatMap((e) => ('run' in e ? [e] : []))
    .sort((x, y) => y.run.created_at.localeCompare(x.run.created_at))
    .slice(0, LISTED_RUNS)
}
