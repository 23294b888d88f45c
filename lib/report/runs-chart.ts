// Cost per run as an inline SVG of horizontal bars, coder and reviewer stacked, with the same words as text.
import { dollarScale } from './chart-scale.ts'
import { formatUsd } from './format.ts'
import { html, joinHtml, type SafeHtml } from './html.ts'

export interface RunSpend {
  run_id: string
  coder: number
  reviewer: number
}

const px = (value: number) => Number(value.toFixed(1))
const WIDTH = 640
const ROW = 28
const PAD = { left: 168, right: 72, top: 12, bottom: 30 }

export function runsChart(runs: RunSpend[]): SafeHtml {
  if (runs.length === 0) return html``
  const height = PAD.top + runs.length * ROW + PAD.bottom
  const plotW = WIDTH - PAD.left - PAD.right
  const scale = dollarScale(Math.max(...runs.map((r) => r.coder + r.reviewer)))
  const x = (usd: number) => px(PAD.left + (usd / scale.top) * plotW)
  const axisY = height - PAD.bottom
  const rows = runs.map((run, i) => {
    const top = PAD.top + i * ROW + 5
    const total = run.coder + run.reviewer
    return html`<g data-run="${run.run_id}">
<text x="${PAD.left - 8}" y="${top + 13}" text-anchor="end">${run.run_id}</text>
<rect class="bar-coder" x="${x(0)}" y="${top}" width="${px(x(run.coder) - x(0))}" height="18"><title>${run.run_id}, coder: ${formatUsd(run.coder)}</title></rect>
<rect class="bar-reviewer" x="${x(run.coder)}" y="${top}" width="${px(x(total) - x(run.coder))}" height="18"><title>${run.run_id}, reviewer: ${formatUsd(run.reviewer)}</title></rect>
<text x="${x(total) + 6}" y="${top + 13}">${formatUsd(total)}</text>
</g>`
  })
  const ticks = scale.ticks.map(
    (tick) =>
      html`<line class="axis" x1="${x(tick)}" x2="${x(tick)}" y1="${PAD.top}" y2="${axisY}"/><text x="${x(tick)}" y="${axisY + 18}" text-anchor="middle">${scale.label(tick)}</text>`,
  )
  const words = runs
    .map((r) => `${r.run_id}: coder ${formatUsd(r.coder)}, reviewer ${formatUsd(r.reviewer)}.`)
    .join(' ')
  return html`<figure class="chart">
<svg role="img" viewBox="0 0 ${WIDTH} ${height}" aria-labelledby="runs-chart-title" aria-describedby="runs-chart-desc">
<title id="runs-chart-title">Cost per run and role</title>
<desc id="runs-chart-desc">${words}</desc>
${joinHtml(ticks)}
${joinHtml(rows)}
</svg>
<figcaption><div class="legend" aria-hidden="true"><span><span class="swatch swatch-coder"></span>coder</span><span><span class="swatch swatch-reviewer"></span>reviewer</span></div></figcaption>
</figure>`
}
