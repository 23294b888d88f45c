// The cost per round and role as a table: the chart's figures in words, each cell carrying its exact value.
import type { BudgetAssessment } from '../cost/brake.ts'
import { formatUsd } from './format.ts'
import { html, type SafeHtml } from './html.ts'
import type { RoundSpend } from './cost-chart.ts'

/** A money cell: the rounded figure for a person, the exact one in `data-usd` (what tests compare). */
export const usdCell = (usd: number | null, what: string) =>
  html`<td class="num" data-cost="${what}" data-usd="${usd === null ? '' : String(usd)}">${formatUsd(usd)}</td>`

export function costTable(rounds: RoundSpend[], budget: BudgetAssessment): SafeHtml {
  let running = 0
  const rows = rounds.map((round) => {
    const total = round.coder + round.reviewer
    running += total
    return html`<tr data-round="${round.n}"><th scope="row">Round ${round.n}${round.in_progress ? ' (in progress)' : ''}</th>${usdCell(round.coder, 'coder')}${usdCell(round.reviewer, 'reviewer')}${usdCell(total, 'round')}${usdCell(running, 'running')}</tr>`
  })
  const { coder, reviewer } = budget.ledger.by_role
  return html`<table class="cost-table">
<caption>Cost per round and role</caption>
<thead><tr><th scope="col">Round</th><th scope="col" class="num">Coder</th><th scope="col" class="num">Reviewer</th><th scope="col" class="num">Round total</th><th scope="col" class="num">Running total</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Run total</th>${usdCell(coder.usd, 'coder-total')}${usdCell(reviewer.usd, 'reviewer-total')}${usdCell(budget.spent, 'total')}<td class="num">${budget.limit === null ? 'no budget' : `of ${formatUsd(budget.limit)}`}</td></tr></tfoot>
</table>`
}

/** The ledger's rounds in the chart's shape. */
export const roundSpends = (budget: BudgetAssessment): RoundSpend[] =>
  budget.ledger.rounds.map((round) => ({
    n: round.n,
    coder: round.coder.usd,
    reviewer: round.reviewer.usd,
    in_progress: round.in_progress,
  }))
