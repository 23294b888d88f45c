// The trend across runs as an inline SVG, oldest first: each run's cost (coder and reviewer stacked) above, its rounds
// below, so a person sees whether runs get cheaper or shorter; the same figures in its description.
import { formatUsd } from '../ground/money.ts'
import { dollarScale } from './chart-scale.ts'
import { html, joinHtml, type SafeHtml } from './html.ts'

export interface TrendPoint {
  run_id: string
  created_at: string
  coder: number
  reviewer: number
  rounds: number
  /** The cost is no (full) measurement: drawn as found, said in words. */
  measured: boolean
}

const WIDTH = 640
const PAD = { left: 76, right: 16, top: 58 } // above the plot: its title, then a row for the ≥ marks
const COST_H = 150
const GAP = 50
const ROUNDS_H = 70
const AXIS_H = 34
const HEIGHT = PAD.top + COST_H + GAP + ROUNDS_H + AXIS_H
const PLOT_W = WIDTH - PAD.left - PAD.right
const LABELS = 5

const px = (value: number) => Number(value.toFixed(1))
const day = (iso: string) => iso.slice(0, 10)
/** The narrowest band a marker above a bar gets drawn in (it would overlap its neighbours in less). */
const MARK_BAND = 12

/**
 * The labelled runs' labels on the time axis, all in one form: month-day when each is on a day of its own, else
 * month-day and time (UTC) to the narrowest unit that tells each from the one before (minute, second, millisecond:
 * runs made by a script), so a person never reads `12-02` beside `05:10` and wonders which is which.
 */
export function timeLabels(points: Array<Pick<TrendPoint, 'created_at'>>, indexes: number[]): string[] {
  const at = indexes.map((i) => points[i]!.created_at)
  const pairs = at.slice(1).map((iso, k) => [at[k]!, iso] as const)
  if (pairs.every(([before, iso]) => day(before) !== day(iso))) return at.map((iso) => day(iso).slice(5))
  const end = [16, 19, 23].find((n) => pairs.every(([before, iso]) => before.slice(0, n) !== iso.slice(0, n))) ?? 23
  return at.map((iso) => `${day(iso).slice(5)} ${iso.slice(11, end)}`)
}

/** The indexes to label on the time axis: the first, the last, and a few evenly between. */
function labelled(count: number): number[] {
  if (count <= LABELS) return Array.from({ length: count }, (_, i) => i)
  return [...new Set(Array.from({ length: LABELS }, (_, k) => Math.round((k * (count - 1)) / (LABELS - 1))))]
}

export function trendDescription(points: TrendPoint[]): string {
  return points
    .map(
      (p) =>
        `${p.run_id} (${day(p.created_at)}): ${p.measured ? '' : 'at least '}${formatUsd(p.coder + p.reviewer)}, ${p.rounds} round${p.rounds === 1 ? '' : 's'}.`,
    )
    .join(' ')
}

export function trendChart(newestFirst: TrendPoint[]): SafeHtml {
  if (newestFirst.length === 0) return html``
  const points = [...newestFirst].reverse()
  const band = PLOT_W / points.length
  const barWidth = px(Math.max(1, Math.min(band * 0.7, 40)))
  const centre = (i: number) => px(PAD.left + band * i + band / 2)
  const cost = dollarScale(Math.max(...points.map((p) => p.coder + p.reviewer)))
  const yCost = (usd: number) => px(PAD.top + COST_H - (usd / cost.top) * COST_H)
  const roundsTop = Math.max(1, ...points.map((p) => p.rounds))
  const roundsBase = PAD.top + COST_H + GAP + ROUNDS_H
  const yRounds = (n: number) => px(roundsBase - (n / roundsTop) * ROUNDS_H)

  const grid = cost.ticks.map(
    (tick) =>
      html`<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${yCost(tick)}" y2="${yCost(tick)}"/><text x="${PAD.left - 8}" y="${yCost(tick) + 4}" text-anchor="end">${cost.label(tick)}</text>`,
  )
  const roundTicks = [...new Set([0, Math.ceil(roundsTop / 2), roundsTop])].map(
    (n) =>
      html`<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${yRounds(n)}" y2="${yRounds(n)}"/><text x="${PAD.left - 8}" y="${yRounds(n) + 4}" text-anchor="end">${n}</text>`,
  )
  const columns = points.map((p, i) => {
    const x = px(centre(i) - barWidth / 2)
    const coderTop = yCost(p.coder)
    const top = yCost(p.coder + p.reviewer)
    const what = `${p.run_id}, ${day(p.created_at)}`
    // a cost not (fully) measured is at least its bar: marked, so an empty slot never reads as a measured $0
    const mark =
      p.measured || band < MARK_BAND
        ? html``
        : html`<text class="unmeasured-mark" x="${centre(i)}" y="${px(top - 6)}" text-anchor="middle">≥<title>${what}: not every figure measured, at least ${formatUsd(p.coder + p.reviewer)}</title></text>`
    return html`<g data-run="${p.run_id}" data-measured="${p.measured ? 'yes' : 'no'}">
${mark}
<rect class="bar-coder" x="${x}" y="${coderTop}" width="${barWidth}" height="${px(yCost(0) - coderTop)}"><title>${what}: coder ${formatUsd(p.coder)}</title></rect>
<rect class="bar-reviewer" x="${x}" y="${top}" width="${barWidth}" height="${px(coderTop - top)}"><title>${what}: reviewer ${formatUsd(p.reviewer)}</title></rect>
<rect class="bar-rounds" x="${x}" y="${yRounds(p.rounds)}" width="${barWidth}" height="${px(roundsBase - yRounds(p.rounds))}"><title>${what}: ${p.rounds} round${p.rounds === 1 ? '' : 's'}</title></rect>
</g>`
  })
  const indexes = labelled(points.length)
  const dates = timeLabels(points, indexes).map(
    (label, k) =>
      html`<text class="date-label" x="${centre(indexes[k]!)}" y="${roundsBase + 22}" text-anchor="middle">${label}</text>`,
  )
  const unmeasured = points.some((p) => !p.measured)
  return html`<figure class="chart trend">
<svg role="img" viewBox="0 0 ${WIDTH} ${HEIGHT}" aria-labelledby="trend-chart-title" aria-describedby="trend-chart-desc">
<title id="trend-chart-title">Cost and rounds per run, oldest first</title>
<desc id="trend-chart-desc">${trendDescription(points)}</desc>
<text class="axis-title" x="${PAD.left}" y="${PAD.top - 32}">cost per run</text>
${joinHtml(grid)}
<text class="axis-title" x="${PAD.left}" y="${PAD.top + COST_H + GAP - 12}">rounds per run</text>
${joinHtml(roundTicks)}
${joinHtml(columns)}
${joinHtml(dates)}
</svg>
<figcaption><div class="legend" aria-hidden="true"><span><span class="swatch swatch-coder"></span>coder</span><span><span class="swatch swatch-reviewer"></span>reviewer</span><span><span class="swatch swatch-rounds"></span>rounds</span>${unmeasured ? html`<span>≥ not every figure measured: at least this</span>` : html``}<span>oldest on the left; month-day, and the time (UTC) where runs share a day</span></div></figcaption>
</figure>`
}
