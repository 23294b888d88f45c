// The report of every run: what they add up to (approval rate, dollars per approved run and per merged PR) and a table.
import type { RunState } from '../state.ts'
import { formatPercent, formatUsd, verdictLabel } from './format.ts'
import { type RunFigures, runFigures, type Summary, summarise } from './figures.ts'
import { html, type SafeHtml } from './html.ts'
import { reportPage } from './page.ts'
import type { RunCost } from './run-cost.ts'
import { runsChart } from './runs-chart.ts'
import { usdCell } from './cost-table.ts'

export type ReportEntry =
  | { run: RunState; cost: RunCost }
  | { unreadable: { run_id: string; code: string; message: string } }

function summaryList(s: Summary): SafeHtml {
  const item = (term: string, value: string, note: string, key: string) =>
    html`<div data-figure="${key}"><dt>${term}</dt><dd>${value}<small>${note}</small></dd></div>`
  const rate = s.approval_rate === null ? '—' : formatPercent(s.approval_rate)
  return html`<dl class="summary">
${item('Runs', String(s.runs), `${s.ended} ended, ${s.runs - s.ended} still open`, 'runs')}
${item('Approval rate', rate, `${s.approved} of ${s.ended} ended runs approved`, 'approval-rate')}
${item('Rounds to approval', s.mean_rounds_to_approval === null ? '—' : s.mean_rounds_to_approval.toFixed(1), 'mean, over approved runs', 'rounds-to-approval')}
${item('Spent', formatUsd(s.spent), s.unmeasured ? `${s.unmeasured} run(s) not measured` : 'every run measured', 'spent')}
${item('Per approved run', formatUsd(s.usd_per_approved), 'ended runs’ spend ÷ approved runs', 'usd-per-approved')}
${item('Per merged PR', formatUsd(s.usd_per_merged), s.merged ? `ended runs’ spend ÷ ${s.merged} merged` : 'no merged PR recorded yet', 'usd-per-merged')}
</dl>`
}

function row(run: RunState, cost: RunCost, figures: RunFigures): SafeHtml {
  const outcome = run.outcome ? verdictLabel(run.outcome.verdict) : `open (${run.phase})`
  const pr = run.pr === null ? '—' : `#${run.pr}${figures.merged ? ' merged' : ''}`
  return html`<tr data-run="${run.run_id}">
<th scope="row"><code>${run.run_id}</code></th>
<td class="task-cell">${run.task.trim().split('\n')[0] ?? ''}</td>
<td>${outcome}</td>
<td class="num">${run.rounds.length}</td>
<td class="num">${figures.rounds_to_approval ?? '—'}</td>
${usdCell(cost.budget ? cost.budget.spent : null, 'spent')}
<td>${pr}</td>
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

export function renderAllRunsReport(entries: ReportEntry[], generatedAt: Date): string {
  const all = entries
    .flatMap((e) => ('run' in e ? [e] : []))
    .sort((x, y) => y.run.created_at.localeCompare(x.run.created_at)) // newest first, by when each started
  const allFigures = all.map(({ run, cost }) => runFigures(run, cost.budget ? cost.budget.spent : null))
  // the totals count every run; only the newest are listed one by one, the rest by month
  const runs = all.slice(0, LISTED_RUNS)
  const figures = allFigures.slice(0, LISTED_RUNS)
  const cut = all.length > runs.length
  const allUnreadable = entries.flatMap((e) => ('unreadable' in e ? [e.unreadable] : []))
  const unreadable = allUnreadable.slice(0, LISTED_RUNS)
  const spends = runs.flatMap(({ run, cost }) =>
    cost.budget
      ? [
          {
            run_id: run.run_id,
            coder: cost.budget.ledger.by_role.coder.usd,
            reviewer: cost.budget.ledger.by_role.reviewer.usd,
          },
        ]
      : [],
  )
  const body = html`<header><p class="eyebrow">pair-loop report</p><h1>Every run</h1></header>
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Summary</h2>${summaryList(summarise(allFigures))}
<p class="muted">Rates and dollars per outcome count the runs whose loop has ended (approved, capped or finished); a run counts as approved once a review approved it, and as merged once its PR's merge is recorded.</p></section>
<section aria-labelledby="runs-heading"><h2 id="runs-heading">Runs</h2>
${
  runs.length === 0
    ? html`<p class="muted">No run yet.</p>`
    : html`<table class="runs-table">
<caption>${cut ? `The ${runs.length} newest of ${all.length} runs` : 'Every run, newest first'}</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Task</th><th scope="col">Outcome</th><th scope="col" class="num">Rounds</th><th scope="col" class="num">To approval</th><th scope="col" class="num">Cost</th><th scope="col">PR</th></tr></thead>
<tbody>${runs.map(({ run, cost }, i) => row(run, cost, figures[i]!))}</tbody>
</table>`
}
${runsChart(spends)}
${cut ? html`<p class="muted">The ${all.length - runs.length} older runs are counted in the summary and by month below; each has its page (<code>pair-loop report --run ID</code>).</p>${monthsTable(all, allFigures)}` : null}
</section>
${unreadable.length ? html`<section aria-labelledby="unreadable-heading"><h2 id="unreadable-heading">Unreadable runs</h2><ul>${unreadable.map((u) => html`<li><code>${u.run_id}</code>: ${u.code}: ${u.message}</li>`)}</ul>${allUnreadable.length > unreadable.length ? html`<p class="muted">and ${allUnreadable.length - unreadable.length} more (<code>pair-loop status --all</code> lists them all)</p>` : null}</section>` : null}`
  return reportPage({ title: 'Every run — pair-loop report', body, generatedAt })
}
