// The report's test runs built by hand: a two-round run, its findings, and budget-check assessments of chosen dollars.
import type { BudgetAssessment } from '../lib/cost/brake.ts'
import type { RoleCost, RoundCost } from '../lib/cost/ledger-types.ts'
import { zeroTokens } from '../lib/cost/pricing.ts'
import { emptyWatch } from '../lib/pr/reduce.ts'
import type { RunCost } from '../lib/report/run-cost.ts'
import type { Finding, RunState } from '../lib/run/state.ts'
import { coderRound, makeRun } from './cost/_gen.ts'

/** A run whose PR 7 pr-check saw merged at `at`. */
export const mergedPr = (run: RunState, at: string): RunState => ({
  ...run,
  pr: 7,
  pr_watch: { ...emptyWatch(7), merged_at: at },
})

export const NOW = new Date('2026-11-30T06:00:00.000Z')
export const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** A budget-check assessment with these per-round dollars ([coder, reviewer]) and limit; a role's $0 is no usage. */
export function assessment(rounds: Array<[number, number]>, limit: number | null): RunCost {
  const role = (usd: number): RoleCost => ({
    usd,
    tokens: zeroTokens(),
    models: usd > 0 ? { 'claude-haiku-4-5': { usd, tokens: zeroTokens() } } : {},
  })
  const roundCosts: RoundCost[] = rounds.map(([coder, reviewer], i) => ({
    n: i + 1,
    in_progress: false,
    usd: coder + reviewer,
    coder: { ...role(coder), from: '2026-11-30T05:00:00.000Z', to: null },
    reviewer: { ...role(reviewer), calls: 1, failed_calls: 0 },
  }))
  const coder = rounds.reduce((sum, [c]) => sum + c, 0)
  const reviewer = rounds.reduce((sum, [, r]) => sum + r, 0)
  const budget: BudgetAssessment = {
    level: limit === null ? null : 'none',
    spent: coder + reviewer,
    limit,
    warn_at: limit === null ? null : limit * 0.8,
    warn_ratio: 0.8,
    ledger: {
      run_id: 'x',
      spent_usd: coder + reviewer,
      by_role: { coder: role(coder), reviewer: { ...role(reviewer), calls: rounds.length, failed_calls: 0 } },
      rounds: roundCosts,
      by_model: {},
      unpriced_models: [],
      unpriced_usage: [],
      complete: true,
      sources: [],
      seen: {},
    },
  }
  return { budget }
}

export function finding(round: number, n: number, text: string, extra: Partial<Finding> = {}): Finding {
  return {
    id: `${round}.${n}`,
    round,
    n,
    key: `k${n}`,
    category: 'bug',
    severity: 'major',
    path: 'src/a.ts',
    line_start: 3,
    line_end: 5,
    text,
    recurring: false,
    recurring_of: null,
    ...extra,
  }
}

/** A finished two-round run: round 1 asks for changes (one finding, answered), round 2 approves. */
export function twoRoundRun(over: Partial<RunState> = {}): RunState {
  const round1 = coderRound(1, null, '2026-11-30T05:10:00.000Z')
  const round2 = coderRound(2, null, '2026-11-30T05:20:00.000Z')
  const review = {
    tool: 'custom' as const,
    fallback_used: false,
    summary: 'Looked at it.',
    session_id: null,
    model: null,
    usage: null,
    cost: null,
    calls: 1,
    duration_ms: 1200,
    raw_output_path: null,
    over_budget: false,
  }
  return makeRun({
    phase: 'finished',
    task: 'Fix sum()',
    outcome: { verdict: 'APPROVED', finished_at: '2026-11-30T05:30:00.000Z' },
    rounds: [
      {
        ...round1,
        reviewer: {
          ...review,
          verdict: 'CHANGES_REQUESTED',
          findings: [finding(1, 1, 'off by one')],
          at: '2026-11-30T05:11:00.000Z',
        },
      },
      { ...round2, reviewer: { ...review, verdict: 'APPROVED', findings: [], at: '2026-11-30T05:21:00.000Z' } },
    ],
    replies: {
      '1.1': {
        finding: '1.1',
        key: 'r:1.1',
        disposition: 'fixed',
        body: 'Bound fixed.',
        at: '2026-11-30T05:12:00.000Z',
        comment_url: null,
      },
    },
    ...over,
  })
}
