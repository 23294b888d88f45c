// A run's cost for the report: the same ledger and limit `budget-check` reports, or why it could not be measured.
import { assessBudget, type BudgetAssessment } from '../cost/brake.ts'
import { context } from '../ground/context.ts'
import { isPairLoopError } from '../ground/errors.ts'
import { configOf } from '../run/run-access.ts'
import type { RunState } from '../run/state.ts'

export type RunCost = { budget: BudgetAssessment; error?: undefined } | { budget?: undefined; error: string }

/** `budget-check`'s own figures for the run (its frozen config's limit and prices); a config error is shown, not thrown. */
export function costOfRun(run: RunState, env: NodeJS.ProcessEnv = context().env): RunCost {
  try {
    return { budget: assessBudget(run, configOf(run), { env }) }
  } catch (error) {
    if (isPairLoopError(error)) return { error: `${error.code}: ${error.message}` }
    throw error
  }
}
