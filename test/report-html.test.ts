// The report's HTML without a browser: agent text escaped everywhere, the charts' SVG with text alternatives, print
// and dark styles, nothing that loads from a network, and the --all figures against a hand count.
import { describe, expect, it } from 'vitest'
import { renderAllRunsReport } from '../lib/report/all-runs-report.ts'
import { dollarScale } from '../lib/report/chart-scale.ts'
import { chartDescription, chartTop, costChart } from '../lib/report/cost-chart.ts'
import { runFigures, summarise } from '../lib/report/figures.ts'
import { mergedAt } from '../lib/run/run-queries.ts'
import { escapeHtml, html, joinHtml, proseHtml, SafeHtml } from '../lib/report/html.ts'
import { renderRunReport } from '../lib/report/run-report.ts'
import { timeLabels, trendChart } from '../lib/report/trend-chart.ts'
import type { RunState } from '../lib/run/state.ts'
import { assessment, finding, HOSTILE, mergedPr, NOW, twoRoundRun } from './_report.ts'

describe('the html template tag', () => {
  it('escapes every interpolated string, keeps built markup, flattens lists and drops nothing-values', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
    const inner = html`<b>${'<i>'}</b>`
    expect(html`<p title="${'"quoted"'}">${inner}${[1, ' & ', null, false, undefined]}</p>`.markup).toBe(
      '<p title="&quot;quoted&quot;"><b>&lt;i&gt;</b>1 &amp; </p>',
    )
    expect(joinHtml([new SafeHtml('<br>'), '<br>']).markup).toBe('<br>&lt;br&gt;')
  })

  it('shows a code span in agent prose as code, escaped, and leaves an unpaired backtick as it is', () => {
    expect(proseHtml('use `Array.from` on `<script>` and a lone ` here').markup).toBe(
      'use <code>Array.from</code> on <code>&lt;script&gt;</code> and a lone ` here',
    )
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

  it('shows the code spans of a finding and of its reply as code, not as backticks', () => {
    const run = twoRoundRun()
    run.rounds[0]!.reviewer!.findings = [finding(1, 1, 'call `close()` in the `finally` block')]
    run.replies['1.1']!.body = 'done: `close()` moved'
    const page = renderRunReport(run, assessment([[0.1, 0.02]], 1), NOW)
    expect(page).toContain('call <code>close()</code> in the <code>finally</code> block')
    expect(page).toContain('done: <code>close()</code> moved')
    expect(page).not.toContain('`')
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
      'Round 1: coder $0.2500, reviewer $0.0100, running total $0.2600. Round 2: coder $0.1500, reviewer $0.0100, running total $0.4200. Total $0.4200. The budget is $1.0000.',
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
    const cost = (spent: number | null) => ({ spent, measured: true })
    const figures = [
      runFigures(first, cost(1)),
      runFigures(third, cost(2)),
      runFigures(capped, cost(1)),
      runFigures(open, cost(5)),
    ]
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
      ended_unmeasured: 0,
      same_vendor: { runs: 0, ended: 0, approved: 0, spent: 0 },
    })
    expect(summarise([runFigures(open, cost(null))])).toMatchObject({
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
    expect(page).toContain('<title id="trend-chart-title">Cost and rounds per run, oldest first</title>')
    expect(page).not.toMatch(/https?:/i)
  })
})

describe('the charts', () => {
  it('scale to what was spent while the budget is far off: a $0.039 run on a $1 budget is no sliver', () => {
    expect(chartTop(0.039, 1)).toBe(0.039)
    expect(chartTop(0.3, 1)).toBe(1) // within reach: the budget line is drawn
    expect(chartTop(1.4, 1)).toBe(1.4)
    expect(chartTop(0.039, null)).toBe(0.039)
    const page = renderRunReport(twoRoundRun(), assessment([[0.039, 0]], 1), NOW)
    const svg = /<svg role="img"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? ''
    expect(svg).not.toContain('class="budget-line"')
    expect(svg).toContain('budget $1.0000 ↑ (3.9% spent)')
    expect(svg).toContain('The budget is $1.0000 (3.9% of it spent, above the chart&#39;s scale).')
    // the bar reaches most of the way up (the plot is 194 units high, from y 30 to 224)
    const bar = /<rect class="bar-coder" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"/.exec(svg)!
    expect(Number(bar[2])).toBeGreaterThan(150)
  })

  it('put the value axis on round steps with labels of equal decimals', () => {
    expect(dollarScale(1)).toMatchObject({ top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] })
    expect(dollarScale(1).label(0.5)).toBe('$0.50')
    expect(dollarScale(0.42).ticks).toEqual([0, 0.2, 0.4, 0.6])
    expect(dollarScale(37).ticks).toEqual([0, 10, 20, 30, 40])
    expect(dollarScale(37).label(10)).toBe('$10')
    expect(dollarScale(0).top).toBe(1) // nothing spent and no budget: still an axis
  })

  // the newcomer read `12-02` beside `05:10` and could not tell days from times: every label has one form
  it.each([
    [
      'runs each on a day of its own: the month-day alone',
      ['2026-12-02T04:57:10Z', '2026-12-03T05:10:00Z', '2026-12-05T09:00:00Z'],
      ['12-02', '12-03', '12-05'],
    ],
    [
      'runs sharing a day: month-day and time (UTC) on every label',
      ['2026-12-02T04:57:10Z', '2026-12-02T05:10:00Z', '2026-12-03T09:00:00Z', '2026-12-03T11:30:00Z'],
      ['12-02 04:57', '12-02 05:10', '12-03 09:00', '12-03 11:30'],
    ],
    [
      'runs of one minute: to the second',
      ['2026-12-02T04:57:10Z', '2026-12-02T04:57:31Z', '2026-12-02T04:57:40Z'],
      ['12-02 04:57:10', '12-02 04:57:31', '12-02 04:57:40'],
    ],
    [
      'runs of one second (started by a script): to the millisecond',
      ['2026-12-02T04:57:10.100Z', '2026-12-02T04:57:31.250Z', '2026-12-02T04:57:31.900Z'],
      ['12-02 04:57:10.100', '12-02 04:57:31.250', '12-02 04:57:31.900'],
    ],
  ])('label the trend in one form: %s', (_name, at, labels) => {
    const points = at.map((created_at) => ({ created_at }))
    expect(
      timeLabels(
        points,
        at.map((_, i) => i),
      ),
    ).toEqual(labels)
  })

  it('mark a run whose cost was not measured above its bar, so its empty slot never reads as a measured $0', () => {
    const point = { created_at: '2026-12-02T04:57:00Z', reviewer: 0, rounds: 1 }
    const svg = String(
      trendChart([
        { ...point, run_id: 'not-measured', coder: 0, measured: false },
        { ...point, run_id: 'measured', coder: 0.4, measured: true },
      ]),
    )
    const group = (id: string) => new RegExp(`<g data-run="${id}"[\\s\\S]*?</g>`).exec(svg)?.[0] ?? ''
    expect(group('not-measured')).toContain('class="unmeasured-mark"')
    expect(group('not-measured')).toContain('not every figure measured, at least $0.0000')
    expect(group('measured')).not.toContain('unmeasured-mark')
    expect(svg).toContain('≥ not every figure measured: at least this')
  })

  it('mark a round with a role not measured above its bar, an empty one too, and no measured round', () => {
    const svg = String(
      costChart(
        [
          { n: 1, coder: 0.05, reviewer: 0, in_progress: false, unmeasured: ['reviewer'] },
          { n: 2, coder: 0, reviewer: 0, in_progress: false, unmeasured: ['coder', 'reviewer'] },
          { n: 3, coder: 0.02, reviewer: 0.01, in_progress: false, unmeasured: [] },
        ],
        null,
        'c',
      ),
    )
    const round = (n: number) =>
      new RegExp(`<g class="round-bars" data-round="${n}">[\\s\\S]*?</g>`).exec(svg)?.[0] ?? ''
    expect(round(1)).toContain('Round 1: coder $0.0500, reviewer not measured; at least $0.0500')
    expect(round(2)).toContain('Round 2: coder not measured, reviewer not measured; at least $0.0000')
    expect(round(3)).not.toContain('unmeasured-mark')
    expect(svg).toContain('≥ a figure not measured: at least this')
  })

  it('describe an unfinished round and a run without a budget in words', () => {
    expect(chartDescription([{ n: 1, coder: 0.5, reviewer: 0, in_progress: true }], null)).toBe(
      'Round 1 (in progress): coder $0.5000, reviewer $0.0000, running total $0.5000. Total $0.5000. No budget is set.',
    )
  })
})
