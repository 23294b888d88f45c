// The report's HTML without a browser: agent text escaped everywhere, the charts' SVG with text alternatives, print
// and dark styles, nothing that loads from a network, and the --all figures against a hand count.
import { describe, expect, it } from 'vitest'
import type { BudgetAssessment } from '../lib/cost/brake.ts'
import type { RoundCost } from '../lib/cost/ledger-types.ts'
import { zeroTokens } from '../lib/cost/pricing.ts'
import { renderAllRunsReport } from '../lib/report/all-runs-report.ts'
import { dollarScale } from '../lib/report/chart-scale.ts'
import { chartDescription } from '../lib/report/cost-chart.ts'
import { emptyWatch } from '../lib/pr/reduce.ts'
import { runFigures, summarise } from '../lib/report/figures.ts'
import { mergedAt } from '../lib/run-queries.ts'
import { escapeHtml, html, joinHtml, SafeHtml } from '../lib/report/html.ts'
import type { RunCost } from '../lib/report/run-cost.ts'
import { renderRunReport } from '../lib/report/run-report.ts'
import type { Finding, RunState } from '../lib/state.ts'
import { coderRound, makeRun } from './cost/_gen.ts'

/** A run whose PR 7 pr-check saw merged at `at`. */
const mergedPr = (run: RunState, at: string): RunState => ({
  ...run,
  pr: 7,
  pr_watch: { ...emptyWatch(7), merged_at: at },
})

const NOW = new Date('2026-11-30T06:00:00.000Z')
const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** A budget-check assessment with these per-round dollars ([coder, reviewer]) and limit. */
function assessment(rounds: Array<[number, number]>, limit: number | null): RunCost {
  const role = (usd: number) => ({ usd, tokens: zeroTokens(), models: {} })
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

function finding(round: number, n: number, text: string, extra: Partial<Finding> = {}): Finding {
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
function twoRoundRun(over: Partial<RunState> = {}): RunState {
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

describe('the html template tag', () => {
  it('escapes every interpolated string, keeps built markup, flattens lists and drops nothing-values', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
    const inner = html`<b>${'<i>'}</b>`
    expect(html`<p title="${'"quoted"'}">${inner}${[1, ' & ', null, false, undefined]}</p>`.markup).toBe(
      '<p title="&quot;quoted&quot;"><b>&lt;i&gt;</b>1 &amp; </p>',
    )
    expect(joinHtml([new SafeHtml('<br>'), '<br>']).markup).toBe('<br>&lt;br&gt;')
  })

  it('drops control characters and escape sequences from agent text', () => {
    expect(escapeHtml('a\u001b[31mred\u001b[0m\u0000b\u202ec')).toBe('aredbc')
  })
})

describe('the report of one run', () => {
  it('escapes hostile agent text in the task, summaries, findings, replies and failed attempts', () => {
    const hostileRun = twoRoundRun({ task: `${HOSTILE}\nsecond line ${HOSTILE}` })
    const round = hostileRun.rounds[0]!
    round.coder.summary = HOSTILE
    round.reviewer!.summary = HOSTILE
    round.reviewer!.findings = [finding(1, 1, HOSTILE, { category: HOSTILE, path: HOSTILE })]
    hostileRun.replies['1.1']!.body = HOSTILE
    hostileRun.failed_reviews = [
      {
        at: '2026-11-30T05:10:30.000Z',
        round: 1,
        tool: 'custom',
        code: 'reviewer_failed',
        message: HOSTILE,
        cost: null,
        raw_output_path: null,
        session_id: null,
      },
    ]
    const page = renderRunReport(hostileRun, assessment([[0.1, 0.02]], 1), NOW)
    expect(page).not.toMatch(/<script|<img|onerror=alert\(1\)>/i)
    // title, h1, the task block, coder and reviewer summaries, finding (text, category, path), reply, failed attempt
    expect(page.split('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;').length - 1).toBe(11)
  })

  it('draws the cost as an SVG image with a title, a description and the budget line', () => {
    const page = renderRunReport(
      twoRoundRun(),
      assessment(
        [
          [0.25, 0.01],
          [0.15, 0.01],
        ],
        1,
      ),
      NOW,
    )
    const svg = /<svg role="img"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? ''
    expect(svg).toContain('<title id="cost-20260105-000000-abcdef-title">Cost per round and role</title>')
    expect(svg).toContain(
      'Round 1: coder $0.2500, reviewer $0.0100, running total $0.2600. Round 2: coder $0.1500, reviewer $0.0100, running total $0.4200. Total $0.4200. The budget is $1.00.',
    )
    expect(svg.match(/<rect class="bar-coder"/g)).toHaveLength(2)
    expect(svg.match(/<rect class="bar-reviewer"/g)).toHaveLength(2)
    expect(svg.match(/class="budget-line"/g)).toHaveLength(1)
    expect(svg).not.toContain('xmlns') // inline SVG in HTML needs no namespace URL
    expect(renderRunReport(twoRoundRun(), assessment([[0.25, 0]], null), NOW)).not.toContain('class="budget-line"')
  })

  it('uses headings, a table with header cells and a caption, and labelled sections', () => {
    const page = renderRunReport(
      twoRoundRun(),
      assessment(
        [
          [0.25, 0.01],
          [0.15, 0.01],
        ],
        1,
      ),
      NOW,
    )
    expect(page).toMatch(/<html lang="en">/)
    expect(page).toContain('<title>Fix sum() — pair-loop run 20260105-000000-abcdef</title>')
    expect(page.match(/<h1>/g)).toHaveLength(1)
    expect(page).toContain('<h2 id="rounds-heading">Rounds</h2>')
    expect(page).toContain('<caption>Cost per round and role</caption>')
    expect(page.match(/<th scope="col"/g)).toHaveLength(5)
    expect(page).toContain('aria-labelledby="cost-heading"')
  })

  it('loads nothing: no http(s) address anywhere, a policy that forbids scripts and fetches, and inline CSS only', () => {
    const page = renderRunReport(twoRoundRun(), assessment([[0.25, 0.01]], 1), NOW)
    expect(page).not.toMatch(/https?:/i)
    expect(page).not.toMatch(/<link|<script|src=|url\(|@import/i)
    expect(page).toContain(`content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;`)
  })

  it('links the PR only when its address is https, and then nothing else is an address', () => {
    const withPr = renderRunReport(
      twoRoundRun({ pr: 7, pr_url: 'https://github.com/o/r/pull/7' }),
      assessment([], 1),
      NOW,
    )
    expect(withPr.match(/https?:/g)).toEqual(['https:'])
    expect(withPr).toContain('<a class="pr-link" href="https://github.com/o/r/pull/7">#7</a>')
    const forged = renderRunReport(twoRoundRun({ pr: 7, pr_url: 'javascript:alert(1)' }), assessment([], 1), NOW)
    expect(forged).not.toContain('href="javascript')
    expect(forged).toContain('<dd>#7</dd>')
  })

  it('has a dark palette, a print layout, and says the colour schemes it supports', () => {
    const page = renderRunReport(twoRoundRun(), assessment([[0.25, 0.01]], 1), NOW)
    expect(page).toContain('@media (prefers-color-scheme: dark)')
    expect(page).toContain('@media print')
    expect(page).toMatch(/break-inside: avoid/)
    expect(page).toContain('<meta name="color-scheme" content="light dark">')
  })

  it('shows why the cost is missing when it could not be measured', () => {
    const page = renderRunReport(twoRoundRun(), { error: 'config_invalid: bad <config>' }, NOW)
    expect(page).toContain('The cost could not be measured: config_invalid: bad &lt;config&gt;')
    expect(page).not.toContain('<svg')
  })
})

describe('the figures of every run', () => {
  const approvedIn = (rounds: number, over: Partial<RunState> = {}): RunState => {
    const run = twoRoundRun(over)
    const approving = run.rounds[1]!
    const asking = run.rounds[0]!
    run.rounds = [
      ...Array.from({ length: rounds - 1 }, (_, i) => ({ ...asking, n: i + 1 })),
      { ...approving, n: rounds },
    ]
    return run
  }

  it('counts rounds to approval, the approval rate and dollars per approved run and merged PR by hand', () => {
    const first = approvedIn(1, { run_id: '20261130-000001-aaaaaa' })
    const third = mergedPr(approvedIn(3, { run_id: '20261130-000002-bbbbbb' }), '2026-12-01T10:00:00.000Z')
    const capped = twoRoundRun({ run_id: '20261130-000003-cccccc', phase: 'capped', outcome: null })
    capped.rounds = [capped.rounds[0]!]
    const open = twoRoundRun({ run_id: '20261130-000004-dddddd', phase: 'coding', outcome: null, rounds: [] })
    const figures = [runFigures(first, 1), runFigures(third, 2), runFigures(capped, 1), runFigures(open, 5)]
    expect(figures.map((f) => [f.ended, f.approved, f.rounds_to_approval, f.merged])).toEqual([
      [true, true, 1, false],
      [true, true, 3, true],
      [true, false, null, false],
      [false, false, null, false],
    ])
    // ended: 3 runs, $4 between them; approved 2 (rounds 1 and 3); merged 1; the open run's $5 is only in `spent`
    expect(summarise(figures)).toEqual({
      runs: 4,
      ended: 3,
      approved: 2,
      merged: 1,
      approval_rate: 2 / 3,
      mean_rounds_to_approval: 2,
      spent: 9,
      usd_per_approved: 2,
      usd_per_merged: 4,
      unmeasured: 0,
    })
    expect(summarise([runFigures(open, null)])).toMatchObject({
      approval_rate: null,
      usd_per_approved: null,
      unmeasured: 1,
    })
  })

  it("counts a PR as merged only when pr-check saw the run's current PR merged", () => {
    expect(mergedAt(mergedPr(twoRoundRun(), '2026-12-01T10:00:00.000Z'))).toBe('2026-12-01T10:00:00.000Z')
    expect(mergedAt(twoRoundRun())).toBeNull()
    // the PR was replaced since: the merge seen was of another PR
    expect(mergedAt({ ...mergedPr(twoRoundRun(), '2026-12-01T10:00:00.000Z'), pr: 8 })).toBeNull()
  })

  it('puts every run in a table, newest first, with unreadable runs named and their messages escaped', () => {
    const older = twoRoundRun({ run_id: '20261130-000001-aaaaaa', created_at: '2026-11-30T01:00:00.000Z' })
    const newer = twoRoundRun({
      run_id: '20261130-000002-bbbbbb',
      created_at: '2026-11-30T02:00:00.000Z',
      task: HOSTILE,
    })
    const page = renderAllRunsReport(
      [
        { run: older, cost: assessment([[0.5, 0.1]], 1) },
        { unreadable: { run_id: '20261130-000003-cccccc', code: 'state_malformed', message: HOSTILE } },
        { run: newer, cost: assessment([[0.2, 0]], 1) },
      ],
      NOW,
    )
    expect([...page.matchAll(/<tr data-run="([^"]+)">/g)].map((m) => m[1])).toEqual([newer.run_id, older.run_id])
    expect(page).toContain('<code>20261130-000003-cccccc</code>: state_malformed: &lt;script&gt;')
    expect(page).not.toMatch(/<script|<img/i)
    expect(page).toContain('<title id="runs-chart-title">Cost per run and role</title>')
    expect(page).not.toMatch(/https?:/i)
  })
})

describe('the charts', () => {
  it('put the value axis on round steps with labels of equal decimals', () => {
    expect(dollarScale(1)).toMatchObject({ top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] })
    expect(dollarScale(1).label(0.5)).toBe('$0.50')
    expect(dollarScale(0.42).ticks).toEqual([0, 0.2, 0.4, 0.6])
    expect(dollarScale(37).ticks).toEqual([0, 10, 20, 30, 40])
    expect(dollarScale(37).label(10)).toBe('$10')
    expect(dollarScale(0).top).toBe(1) // nothing spent and no budget: still an axis
  })

  it('describe an unfinished round and a run without a budget in words', () => {
    expect(chartDescription([{ n: 1, coder: 0.5, reviewer: 0, in_progress: true }], null)).toBe(
      'Round 1 (in progress): coder $0.5000, reviewer $0.0000, running total $0.5000. Total $0.5000. No budget is set.',
    )
  })
})
