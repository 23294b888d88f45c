// budget-check: the run's cost so far, per round, role and model, from the agents' own records (a finished run's too);
// at the limit the normal document with exit 13 (budget_exceeded), and what was not measured said on stderr.
import { askBudget } from '../run/ask.ts'
import { withExit } from '../ground/document.ts'
import type { Context } from '../ground/context.ts'
import { type BudgetAssessment, assessBudget, choiceForRound, overLimit } from '../cost/brake.ts'
import { rememberHighWater } from '../cost/high-water.ts'
import { fullyMeasured, unmeasuredOf } from '../cost/measured.ts'
import { ERROR_CODES } from '../ground/errors.ts'
import { formatUsd } from '../ground/money.ts'
import { configOf, resolveRun } from '../run/run-access.ts'
import { nextStep } from '../run/run-queries.ts'

export interface BudgetCheckOptions {
  run?: string
  cwd?: string
  /** The limit to check against in USD (default: the run's budget, then config budget.per_run_usd). */
  limit?: number
}

export async function run(ctx: Context, options: BudgetCheckOptions) {
  const say = (line: string) => ctx.io.stderr(`pair-loop budget-check: ${line}\n`)
  // a finished run too (the newest of this repository when none is active): its cost per round, afterwards
  const run = resolveRun(options, { allowFinished: true })
  const budget = assessBudget(run, configOf(run), { limit: options.limit })
  const { ledger } = budget
  await rememberHighWater(run, ledger.seen) // money seen now stays counted if its transcript goes
  sayWhatIsNotMeasured(budget, say)
  const unmeasured = unmeasuredOf(ledger) // the roles and rounds whose $0 is no measurement
  const document = {
    run_id: run.run_id,
    phase: run.phase,
    level: budget.level,
    spent: budget.spent,
    limit: budget.limit,
    warn_at: budget.warn_at,
    by_role: ledger.by_role,
    rounds: ledger.rounds,
    by_model: ledger.by_model,
    unpriced_models: ledger.unpriced_models,
    // complete only when every figure is a measurement: a role or round with no records is not "every figure measured"
    complete: fullyMeasured({ complete: ledger.complete, unmeasured }),
    unmeasured,
    sources: ledger.sources,
  }
  // the person said go on in this round already (coder-done --over-budget): told, not asked again, until the next round
  const chosen = budget.level === 'alert' && run.phase !== 'finished' ? choiceForRound(run) : null
  if (chosen) {
    say(`over the limit; the person chose to go on in round ${chosen.round} (${chosen.command} --over-budget)`)
    return { ...document, over_budget_by_choice: chosen, next: nextStep(run) }
  }
  // the brake stops a loop that goes on: a finished run over its budget is reported, not refused
  if (budget.level === 'alert' && run.phase !== 'finished') {
    const refused = nextStep(run) === 'review' ? 'review' : 'coder-done'
    say(`budget_exceeded: ${overLimit(run.run_id, budget)}`)
    return withExit({ ...document, next: 'ask-user', ask: askBudget(refused) }, ERROR_CODES.budget_exceeded.exit)
  }
  if (budget.level === 'warn')
    say(
      `warning: spent ${formatUsd(budget.spent)}, past ${Math.round(budget.warn_ratio * 100)}% of ${formatUsd(budget.limit)}`,
    )
  return document
}

/** Every model without a price, every source that could not be read or measured, every cost taken from the state. */
function sayWhatIsNotMeasured({ ledger }: BudgetAssessment, say: (line: string) => void): void {
  for (const model of ledger.unpriced_models)
    say(`warning: no price for model ${model}; it is counted as $0 (add it under "pricing" in config)`)
  const problems = ledger.sources.filter(
    (s) => s.status === 'missing' || s.status === 'unreadable' || s.status === 'unmeasured',
  )
  for (const s of problems) say(`warning: ${s.role}${s.round ? ` round ${s.round}` : ''}: ${s.status}: ${s.why}`)
  for (const s of ledger.sources.filter((source) => source.kind === 'state'))
    say(`note: coder session ${s.session}: ${formatUsd(s.usd)} ${s.why}`)
}
