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

export function renderAllRunsReport(entries: ReportEntry[], generatedAt: Date): string {
  const runs = entries
    .flatMap((e) => ('run' in e ? [e] : []))
    .sort((x, y) => y.run.created_at.localeCompare(x.run.created_at)) // newest first, by when each started
  const figures = runs.map(({ run, cost }) => runFigures(run, cost.budget ? cost.budget.spent : null))
  const unreadable = entries.flatMap((e) => ('unreadable' in e ? [e.unreadable] : []))
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
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Summary</h2>${summaryList(summarise(figures))}
<p class="muted">Rates and dollars per outcome count the runs whose loop has ended (approved, capped or finished); a run counts as approved once a review approved it, and as merged once its PR's merge is recorded.</p></section>
<section aria-labelledby="runs-heading"><h2 id="runs-heading">Runs</h2>
${
  runs.length === 0
    ? html`<p class="muted">No run yet.</p>`
    : html`<table class="runs-table">
<caption>Every run, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Task</th><th scope="col">Outcome</th><th scope="col" class="num">Rounds</th><th scope="col" class="num">To approval</th><th scope="col" class="num">Cost</th><th scope="col">PR</th></tr></thead>
<tbody>${runs.map(({ run, cost }, i) => row(run, cost, figures[i]!))}</tbody>
</table>`
}
${runsChart(spends)}
</section>
${unreadable.length ? html`<section aria-labelledby="unreadable-heading"><h2 id="unreadable-heading">Unreadable runs</h2><ul>${unreadable.map((u) => html`<li><code>${u.run_id}</code>: ${u.code}: ${u.message}</li>`)}</ul></section>` : null}`
  return reportPage({ title: 'Every run — pair-loop report', body, generatedAt })
}
