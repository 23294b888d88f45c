#!/usr/bin/env node
// budget-check: the run's cost so far, per round, role and model, from the agents' own records; exit 13 at the limit.
import { decimalFlag, defineScript, isMain, main, runArgs, withExit } from '../lib/cli.ts'
import { askBudget } from '../lib/ask.ts'
import { assessBudget, overLimit } from '../lib/cost/brake.ts'
import { rememberHighWater } from '../lib/cost/high-water.ts'
import { ERROR_CODES } from '../lib/errors.ts'
import { formatUsd } from '../lib/money.ts'
import { unmeasuredOf } from '../lib/cost/measured.ts'
import { configOf, resolveRun } from '../lib/run-access.ts'
import { nextStep } from '../lib/run-queries.ts'

const budgetCheck = defineScript({
  name: 'budget-check',
  description: "The run's cost so far by round, role and model, from the agents' own records; exit 13 at the limit.",
  args: {
    ...runArgs,
    limit: {
      type: 'string',
      description: 'the limit to check against in USD (default: the run budget, then config budget.per_run_usd)',
      valueHint: 'USD',
    },
  },
  async run(args, io) {
    const limit = decimalFlag(args.limit, 'limit')
    // a finished run too (the newest of this repository when none is active): its cost per round, afterwards
    const run = resolveRun(args, { allowFinished: true })
    const budget = assessBudget(run, configOf(run), { limit })
    const { ledger } = budget
    await rememberHighWater(run.run_id, ledger.seen) // money seen now stays counted if its transcript goes
    for (const model of ledger.unpriced_models) {
      io.stderr(
        `pair-loop budget-check: warning: no price for model ${model}; it is counted as $0 (add it under "pricing" in config)\n`,
      )
    }
    const problems = ledger.sources.filter(
      (s) => s.status === 'missing' || s.status === 'unreadable' || s.status === 'unmeasured',
    )
    for (const s of problems)
      io.stderr(
        `pair-loop budget-check: warning: ${s.role}${s.round ? ` round ${s.round}` : ''}: ${s.status}: ${s.why}\n`,
      )
    for (const s of ledger.sources.filter((source) => source.kind === 'state'))
      io.stderr(`pair-loop budget-check: note: coder session ${s.session}: ${formatUsd(s.usd)} ${s.why}\n`)
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
      complete: ledger.complete,
      unmeasured: unmeasuredOf(ledger), // the roles and rounds whose $0 is no measurement
      sources: ledger.sources,
    }
    // the brake stops a loop that goes on: a finished run over its budget is reported, not refused
    if (budget.level === 'alert' && run.phase !== 'finished') {
      const next = nextStep(run)
      const refused = next === 'review' ? 'review' : 'coder-done'
      Object.assign(document, { next: 'ask-user', ask: askBudget(refused) })
      io.stderr(`pair-loop budget-check: budget_exceeded: ${overLimit(run.run_id, budget)}\n`)
      return withExit(document, ERROR_CODES.budget_exceeded.exit)
    }
    if (budget.level === 'warn')
      io.stderr(
        `pair-loop budget-check: warning: spent ${formatUsd(budget.spent)}, past ${Math.round(budget.warn_ratio * 100)}% of ${formatUsd(budget.limit)}\n`,
      )
    return document
  },
})

export default budgetCheck
if (isMain(import.meta)) void main(budgetCheck)
