// Cost per round and role as an inline SVG: stacked coder/reviewer bars, the running total, and the budget line (when
// the run has come near enough to it that drawing it does not flatten the bars to slivers).
import { formatUsd } from '../ground/money.ts'
import { html, joinHtml, type SafeHtml } from './html.ts'
import { dollarScale } from './chart-scale.ts'

export interface RoundSpend {
  n: number
  coder: number
  reviewer: number
  in_progress: boolean
  /** Roles whose figure for this round is no measurement (drawn as 0, said in words). */
  unmeasured?: Array<'coder' | 'reviewer'>
}

/** The budget is drawn once the run has spent this share of it; further off, the scale runs to what was spent. */
export const BUDGET_IN_VIEW = 0.25

/** The value axis's top: the larger of spent and budget while the budget is in view, else what was spent. */
export function chartTop(spent: number, limit: number | null): number {
  return limit !== null && spent >= limit * BUDGET_IN_VIEW ? Math.max(limit, spent) : spent
}

/** A role's figure for a round in words: its dollars, or that it was not measured. */
const said = (round: RoundSpend, role: 'coder' | 'reviewer') =>
  round.unmeasured?.includes(role) ? `${role} not measured` : `${role} ${formatUsd(round[role])}`

const share = (spent: number, limit: number) => `${((spent / limit) * 100).toFixed(1)}%`

const WIDTH = 640
const HEIGHT = 300
const PAD = { left: 76, right: 24, top: 50, bottom: 56 } // above the plot: the budget's label, then the ≥ marks
const PLOT_W = WIDTH - PAD.left - PAD.right
const PLOT_H = HEIGHT - PAD.top - PAD.bottom

const px = (value: number) => Number(value.toFixed(1))

/** The chart's words, for a screen reader and for anyone who cannot see the bars. */
export function chartDescription(rounds: RoundSpend[], limit: number | null): string {
  let running = 0
  const parts = rounds.map((round) => {
    running += round.coder + round.reviewer
    const state = round.in_progress ? ' (in progress)' : ''
    return `Round ${round.n}${state}: ${said(round, 'coder')}, ${said(round, 'reviewer')}, running total ${formatUsd(running)}.`
  })
  const against =
    limit === null
      ? 'No budget is set.'
      : `The budget is ${formatUsd(limit)}${running < limit * BUDGET_IN_VIEW ? ` (${share(running, limit)} of it spent, above the chart's scale)` : ''}.`
  return [...parts, `Total ${formatUsd(running)}.`, against].join(' ')
}

export function costChart(rounds: RoundSpend[], limit: number | null, id: string): SafeHtml {
  if (rounds.length === 0) return html`<p class="muted">No round has been recorded yet: nothing to chart.</p>`
  let sum = 0
  const totals = rounds.map((round) => (sum += round.coder + round.reviewer))
  const scale = dollarScale(chartTop(totals.at(-1)!, limit))
  const budgetInView = limit !== null && limit <= scale.top
  const y = (usd: number) => px(PAD.top + PLOT_H - (usd / scale.top) * PLOT_H)
  const band = PLOT_W / rounds.length
  const barWidth = px(Math.min(band * 0.5, 64))
  const centre = (i: number) => px(PAD.left + band * i + band / 2)

  const grid = scale.ticks.map(
    (tick) =>
      html`<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(tick)}" y2="${y(tick)}"/><text x="${PAD.left - 8}" y="${y(tick) + 4}" text-anchor="end">${scale.label(tick)}</text>`,
  )
  const bars = rounds.map((round, i) => {
    const x = px(centre(i) - barWidth / 2)
    const coderTop = y(round.coder)
    const reviewerTop = y(round.coder + round.reviewer)
    const label = `Round ${round.n}${round.in_progress ? ' (in progress)' : ''}`
    const short = `${round.n}${round.in_progress ? '…' : ''}`
    // a round with a role not measured costs at least its bar: marked, so an empty bar never reads as a measured $0
    const mark = round.unmeasured?.length
      ? html`<text class="unmeasured-mark" x="${centre(i)}" y="${px(reviewerTop - 6)}" text-anchor="middle">≥<title>${label}: ${said(round, 'coder')}, ${said(round, 'reviewer')}; at least ${formatUsd(round.coder + round.reviewer)}</title></text>`
      : html``
    return html`<g class="round-bars" data-round="${round.n}">
${mark}
<rect class="bar-coder" x="${x}" y="${coderTop}" width="${barWidth}" height="${px(y(0) - coderTop)}"><title>${label}: ${said(round, 'coder')}</title></rect>
<rect class="bar-reviewer" x="${x}" y="${reviewerTop}" width="${barWidth}" height="${px(coderTop - reviewerTop)}"><title>${label}: ${said(round, 'reviewer')}</title></rect>
<text class="round-label" x="${centre(i)}" y="${HEIGHT - PAD.bottom + 22}" text-anchor="middle">${short}</text>
</g>`
  })
  const points = totals.map((total, i) => `${centre(i)},${y(total)}`).join(' ')
  const running = html`<polyline class="running" points="${points}"/>${totals.map(
    (total, i) =>
      html`<circle class="running-dot" cx="${centre(i)}" cy="${y(total)}" r="4"><title>Running total after round ${rounds[i]!.n}: ${formatUsd(total)}</title></circle>`,
  )}`
  const budget =
    limit === null
      ? null
      : !budgetInView
        ? html`<text class="budget-label" x="${WIDTH - PAD.right}" y="${PAD.top - 28}" text-anchor="end">budget ${formatUsd(limit)} ↑ (${share(totals.at(-1)!, limit)} spent)</text>`
        : html`<line class="budget-line" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(limit)}" y2="${y(limit)}"/><text class="budget-label" x="${WIDTH - PAD.right}" y="${y(limit) - 6}" text-anchor="end">budget ${formatUsd(limit)}</text>`

  return html`<figure class="chart">
<svg role="img" viewBox="0 0 ${WIDTH} ${HEIGHT}" aria-labelledby="${id}-title" aria-describedby="${id}-desc">
<title id="${id}-title">Cost per round and role</title>
<desc id="${id}-desc">${chartDescription(rounds, limit)}</desc>
${joinHtml(grid)}
<line class="axis" x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${y(0)}"/>
<text class="axis-title" x="${PAD.left + PLOT_W / 2}" y="${HEIGHT - 6}" text-anchor="middle">round</text>
${joinHtml(bars)}
${running}
${budget}
</svg>
<figcaption>
<div class="legend" aria-hidden="true"><span><span class="swatch swatch-coder"></span>coder</span><span><span class="swatch swatch-reviewer"></span>reviewer</span><span><span class="swatch swatch-total"></span>running total</span>${rounds.some((round) => round.unmeasured?.length) ? html`<span>≥ a figure not measured: at least this</span>` : html``}${limit === null ? html`<span>no budget set</span>` : html`<span><span class="swatch swatch-budget"></span>budget ${formatUsd(limit)}</span>`}</div>
</figcaption>
</figure>`
}
