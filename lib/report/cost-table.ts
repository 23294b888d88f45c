// The cost per round and role as a table: the chart's figures in words, each cell carrying its exact value, and a
// figure that is no measurement said to be one.
import type { BudgetAssessment } from '../cost/brake.ts'
import { roundMeasured, type Unmeasured } from '../cost/measured.ts'
import { formatUsd } from '../ground/money.ts'
import { html, type SafeHtml } from './html.ts'
import type { RoundSpend } from './cost-chart.ts'

/**
 * A money cell: the rounded figure for a person, the exact one in `data-usd` (what tests compare); `not measured`
 * when the figure is none (its `data-usd` still the ledger's), `at least` when part of it could not be measured.
 */
export const usdCell = (
  usd: number | null,
  what: string,
  measured: 'yes' | 'partly' | 'no' = 'yes',
  label?: string,
  atLeast = 'at least ',
) =>
  html`<td class="num${measured === 'yes' ? '' : ' unmeasured'}"${label ? html` data-label="${label}"` : null} data-cost="${what}" data-usd="${usd === null ? '' : String(usd)}"${measured === 'yes' ? '' : html` data-measured="${measured}"`}>${usd === null || measured === 'no' ? 'not measured' : `${measured === 'partly' ? atLeast : ''}${formatUsd(usd)}`}</td>`

/** A table that scrolls sideways on a narrow screen with its first column kept in view. */
export const scrolling = (table: SafeHtml) => html`<div class="table-scroll">${table}</div>`

const roleState = (unmeasured: Unmeasured, role: 'coder' | 'reviewer') =>
  unmeasured.roles.find((r) => r.role === role)?.how === 'none'
    ? 'no'
    : unmeasured.roles.some((r) => r.role === role) || unmeasured.rounds.some((r) => r.role === role)
      ? 'partly'
      : 'yes'

export function costTable(rounds: RoundSpend[], budget: BudgetAssessment, unmeasured: Unmeasured): SafeHtml {
  let running = 0
  let runningMeasured = true
  const rows = rounds.map((round) => {
    const total = round.coder + round.reviewer
    running += total
    const coder = roundMeasured(unmeasured, round.n, 'coder')
    const reviewer = roundMeasured(unmeasured, round.n, 'reviewer')
    runningMeasured &&= coder && reviewer
    const both = coder && reviewer ? 'yes' : coder || reviewer ? 'partly' : 'no'
    return html`<tr data-round="${round.n}"><th scope="row">Round ${round.n}${round.in_progress ? ' (in progress)' : ''}</th>${usdCell(round.coder, 'coder', coder ? 'yes' : 'no', 'Coder')}${usdCell(round.reviewer, 'reviewer', reviewer ? 'yes' : 'no', 'Reviewer')}${usdCell(total, 'round', both, 'Round total')}${usdCell(running, 'running', runningMeasured ? 'yes' : 'partly', 'Running total')}</tr>`
  })
  const { coder, reviewer } = budget.ledger.by_role
  const coderState = roleState(unmeasured, 'coder')
  const reviewerState = roleState(unmeasured, 'reviewer')
  const totalState =
    coderState === 'no' && reviewerState === 'no'
      ? 'no'
      : coderState === 'yes' && reviewerState === 'yes'
        ? 'yes'
        : 'partly'
  return scrolling(html`<table class="cost-table reflow">
<caption>Cost per round and role</caption>
<thead><tr><th scope="col">Round</th><th scope="col" class="num">Coder</th><th scope="col" class="num">Reviewer</th><th scope="col" class="num">Round total</th><th scope="col" class="num">Running total</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Run total</th>${usdCell(coder.usd, 'coder-total', coderState, 'Coder')}${usdCell(reviewer.usd, 'reviewer-total', reviewerState, 'Reviewer')}${usdCell(budget.spent, 'total', totalState, 'Total')}<td class="num" data-label="Budget">${budget.limit === null ? 'no budget' : `of ${formatUsd(budget.limit)}`}</td></tr></tfoot>
</table>`)
}

/** The ledger's rounds in the chart's shape, with the roles each could not measure. */
export const roundSpends = (budget: BudgetAssessment, unmeasured: Unmeasured): RoundSpend[] =>
  budget.ledger.rounds.map((round) => ({
    n: round.n,
    coder: round.coder.usd,
    reviewer: round.reviewer.usd,
    in_progress: round.in_progress,
    unmeasured: (['coder', 'reviewer'] as const).filter((role) => !roundMeasured(unmeasured, round.n, role)),
  }))
