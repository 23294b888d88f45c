// The text views a person reads (issue 21, 14), from the documents the commands print: the coder's reply under its
// finding, recurrences and line ranges in status, the round as a person counts it, the reviewer's own severity word,
// budget-check's by_model and `complete` in words, one money precision, review and finish in sentences, every run with
// its cost, repository and date, the person's decision, and every line within the terminal's width.
import { describe, expect, it } from 'vitest'
import { overLimit } from '../lib/cost/brake.ts'
import { readStructured } from '../lib/review/structured.ts'
import { parseFindings } from '../lib/run/grammar.ts'
import { documentText } from '../lib/view/text-view.ts'
import { expectOk, runInReview, writeChange } from './_expect.ts'
import { sandbox } from './_helpers.ts'

const RUN = '20261130-051500-a1b2c3'
const LONG = `${'the loop bound is off by one and the last element is never visited '.repeat(6)}end`.trim()

const finding = (over: Record<string, unknown> = {}) => ({
  id: '1.1',
  category: 'bug',
  severity: 'major',
  path: 'src/a.ts',
  line_start: 3,
  line_end: 5,
  text: 'the loop bound is off by one',
  recurring: false,
  recurring_of: null,
  ...over,
})

/** A status document as `status` prints it (the fields a view reads). */
const status = (over: Record<string, unknown> = {}) => ({
  version: 1,
  run_id: RUN,
  phase: 'coding',
  round: 2,
  rounds_left: 2,
  max_rounds: 3,
  next: 'reply',
  task: 'Fix sum()',
  repo: '/work/app',
  branch: 'fix',
  coder: 'claude',
  reviewer: 'codex',
  reviewer_fallback: false,
  open_findings: [{ ...finding(), line: 3, line_start: undefined }],
  replies: 0,
  review_in_progress: false,
  failed_reviews: 0,
  budget: { limit_usd: 0.05, spent_usd: 0.056682, unmeasured: { roles: [], rounds: [] } },
  outcome: null,
  pr: null,
  pr_url: null,
  revision: 4,
  updated_at: '2026-11-30T05:20:00.000Z',
  state_path: '/h/runs/x.json',
  handoff_path: '/work/app/HANDOFF.md',
  config_changed: false,
  ...over,
})

const line = (text: string, key: string) =>
  text
    .split('\n')
    .find((l) => l.startsWith(`${key}  `) || l === key)
    ?.slice(key.length)
    .trim()

describe('findings --text', () => {
  it("shows the coder's reply under the finding it answers", () => {
    const reply = { disposition: 'fixed', body: 'The loop now runs to values.length.', at: 'x', comment_url: null }
    const text = documentText('findings', {
      run_id: RUN,
      verdict: 'CHANGES_REQUESTED',
      findings: [{ ...finding(), reply, status: 'answered' }],
    })
    const lines = text.split('\n')
    const at = lines.findIndex((l) => l.startsWith('1.1 '))
    expect(lines[at + 1]?.trim()).toBe('↳ fixed: The loop now runs to values.length.')
  })
})

describe('status --text of a real loop', () => {
  it('shows a finding that came back with the one it repeats, and its whole line range', async () => {
    const sb = sandbox()
    await runInReview(sb)
    expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
    for (const id of ['1.1', '1.2'])
      expectOk(
        await sb.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], { input: 'done' }),
      )
    writeChange(sb)
    expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
    expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
    const json = expectOk(await sb.cli(['status']))
    expect(json.open_findings[0]).toMatchObject({ id: '2.1', line: 3, line_end: 5, recurring_of: '1.1' })
    const text = (await sb.cli(['status', '--text'])).stdout
    const flat = text.replace(/\s+/g, ' ')
    expect(flat).toContain(
      '2.1 bug/major src/a.ts:3-5 the loop bound is off by one: the last element is never visited (again: 1.1)',
    )
  })
})

describe('a run nothing measured', () => {
  // the coder wrote no transcript and the stub reviewer reports no cost: neither role has a figure, so $0 is no sum
  const sb = sandbox()
  const reviewed = (async () => {
    await runInReview(sb)
    expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
  })()

  it('reads "at least" on budget-check\'s spent line', async () => {
    await reviewed
    const text = (await sb.cli(['budget-check', '--text'])).stdout
    expect(line(text, 'spent')).toBe('at least $0.0000')
  })

  it('is finished with the cost said as at least its sum, naming the roles not measured, in JSON and in text', async () => {
    await reviewed
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
    expect(doc.unmeasured.roles.map((r: { role: string; how: string }) => `${r.role} ${r.how}`)).toEqual([
      'coder none',
      'reviewer none',
    ])
    const text = (await sb.cli(['finish', '--verdict', 'ABANDONED', '--text'])).stdout
    expect(line(text, 'cost')).toBe('at least $0.0000; not measured: coder; reviewer')
  })
})

describe('status --text', () => {
  it('says where a recurring finding came back from, and the whole line range', () => {
    const text = documentText(
      'status',
      status({ open_findings: [{ ...finding(), line: 3, recurring: true, recurring_of: '1.1' }] }),
    )
    expect(text).toMatch(/ src\/a\.ts:3-5 .* \(again: 1\.1\)$/m)
  })

  // budget-check --text counts that work as round 2 "(now)": one number in every view
  it('numbers the round the coder answers findings in as budget-check does, naming the review it answers', () => {
    expect(line(documentText('status', status()), 'round')).toBe("2 of 3 (the coder answers round 1's findings)")
    const working = status({ next: 'coder-done', open_findings: [] })
    expect(line(documentText('status', working), 'round')).toBe('2 of 3 (the coder is at work)')
  })

  it('says a round past the cap is past it, by the person’s choice', () => {
    const past = status({ phase: 'reviewing', round: 6, rounds_left: 0, next: 'review', open_findings: [] })
    expect(line(documentText('status', past), 'round')).toBe(
      "6 of 3 (under review; 3 past the cap, by the person's choice)",
    )
  })

  it('shows why the run waits for the person and the command for each answer', () => {
    const ask = {
      reason: 'round_cap',
      choices: [
        { say: 'one more round', command: 'pair-loop coder-done --over-cap --summary-file -' },
        { say: 'abandon the run', command: 'pair-loop finish --verdict ABANDONED' },
      ],
    }
    const text = documentText('status', status({ phase: 'capped', next: 'ask-user', ask, open_findings: [] }))
    expect(text).toContain('waiting for you: the round cap was reached without an approval')
    expect(text).toMatch(/^ {2}one more round +pair-loop coder-done --over-cap --summary-file -$/m)
    expect(text).not.toMatch(/^ask /m) // not left to the generic lines below
  })

  it("says a won't-fix finding came back with the apostrophe its answers use", () => {
    const ask = {
      reason: 'wont_fix_recurring',
      choices: [{ say: "keep 2.1 as won't-fix", command: 'pair-loop reply --finding 2.1 --disposition wont-fix' }],
    }
    const text = documentText('status', status({ next: 'ask-user', ask, open_findings: [] }))
    expect(text).toContain("waiting for you: a finding the coder answered won't-fix came back")
  })

  it('names the roles it could not measure instead of showing them as spent', () => {
    const unmeasured = { roles: [{ role: 'coder', how: 'none', why: 'no transcript' }], rounds: [] }
    const text = documentText('status', status({ budget: { limit_usd: null, spent_usd: 0.144, unmeasured } }))
    expect(line(text, 'spent')).toBe('at least $0.1440 (no limit); not measured: coder')
  })
})

describe('money', () => {
  it('has one precision in every view and in the error line', () => {
    expect(line(documentText('status', status()), 'spent')).toBe('$0.0567 of $0.0500')
    const budget = {
      run_id: RUN,
      phase: 'coding',
      level: 'alert',
      spent: 0.056682,
      limit: 0.05,
      warn_at: 0.04,
      by_role: { coder: { usd: 0.056682, models: {} }, reviewer: { usd: 0, calls: 0, failed_calls: 0, models: {} } },
      rounds: [],
      by_model: {},
      unpriced_models: [],
      complete: true,
      sources: [],
    }
    expect(line(documentText('budget-check', budget), 'spent')).toBe('$0.0567 of $0.0500 (warn at $0.0400)')
    const assessed = { spent: 0.056682, limit: 0.05, ledger: { unpriced_usage: [] } }
    expect(overLimit(RUN, assessed as never)).toBe(`run ${RUN} has spent $0.0567 of its $0.0500 budget`)
  })
})

describe('budget-check --text', () => {
  const doc = (over: Record<string, unknown> = {}) => ({
    run_id: RUN,
    phase: 'finished',
    level: null,
    spent: 0.0094,
    limit: null,
    warn_at: null,
    by_role: {
      coder: { usd: 0, tokens: {}, models: {} },
      reviewer: { usd: 0.0094, calls: 1, failed_calls: 0, models: { 'gpt-5.4': {} } },
    },
    rounds: [
      {
        n: 1,
        in_progress: false,
        coder: { usd: 0, models: {} },
        reviewer: { usd: 0.0094, calls: 1, failed_calls: 0, models: { 'gpt-5.4': {} } },
      },
    ],
    by_model: {
      'gpt-5.4': {
        usd: 0.0094,
        role: 'reviewer',
        tokens: { input: 1200, output: 300, cache_read: 800, cache_write_5m: 0, cache_write_1h: 0 },
      },
    },
    unpriced_models: [],
    complete: true,
    unmeasured: { roles: [], rounds: [] },
    sources: [],
    ...over,
  })

  it('lays by_model out as a table of tokens and dollars per model, not raw keys', () => {
    const text = documentText('budget-check', doc())
    expect(text).toMatch(/^ {2}MODEL +ROLE +USD +INPUT +OUTPUT +CACHE READ +CACHE WRITE$/m)
    expect(text).toMatch(/^ {2}gpt-5\.4 +reviewer +\$0\.0094 +1200 +300 +800 +0$/m)
    expect(text).not.toMatch(/by_model/)
  })

  it('says what complete means: every figure measured, or why the figures may be low', () => {
    expect(line(documentText('budget-check', doc()), 'complete')).toBe('yes: every figure is measured and priced')
    const unmeasured = {
      roles: [{ role: 'coder', how: 'none', why: 'no transcript' }],
      rounds: [{ n: 1, role: 'coder', why: 'no coder response in its window' }],
    }
    const low = documentText('budget-check', doc({ complete: false, unmeasured }))
    expect(line(low, 'complete')).toBe('no: the figures may be low (not measured: coder)')
    expect(low).toMatch(/^1 +coder +not measured/m)
  })

  it('never says every figure is measured beside one that is not, whatever `complete` says', () => {
    const unmeasured = { roles: [{ role: 'coder', how: 'none', why: 'no transcript' }], rounds: [] }
    const text = documentText('budget-check', doc({ complete: true, unmeasured }))
    expect(line(text, 'complete')).toBe('no: the figures may be low (not measured: coder)')
    expect(line(text, 'spent')).toBe('at least $0.0094')
  })
})

describe('the reviewer’s own severity word', () => {
  it('is kept beside the severity it maps to, in the text grammar and the structured answer', () => {
    expect(parseFindings('1. [bug/critical] src/a.ts:3 — boom')[0]).toMatchObject({
      severity: 'blocker',
      severity_said: 'critical',
    })
    expect(parseFindings('1. [bug/major] src/a.ts:3 — boom')[0]).not.toHaveProperty('severity_said')
    const structured = readStructured({
      verdict: 'CHANGES_REQUESTED',
      summary: '',
      findings: [{ category: 'bug', severity: 'Critical', path: null, line_start: null, line_end: null, text: 'x' }],
    })
    expect(structured?.findings[0]).toMatchObject({ severity: 'blocker', severity_said: 'critical' })
  })

  it('shows in the findings table: blocker, with the word the reviewer used', () => {
    const text = documentText('findings', {
      run_id: RUN,
      verdict: null,
      findings: [{ ...finding({ severity: 'blocker', severity_said: 'critical' }), reply: null, status: 'open' }],
    })
    expect(text).toMatch(/^1\.1 +bug\/blocker \(critical\) +src\/a\.ts:3-5 +open +/m)
  })
})

describe('review --text and finish --text', () => {
  it('read as sentences, not flattened keys', () => {
    const review = documentText('review', {
      run_id: RUN,
      round: 1,
      verdict: 'CHANGES_REQUESTED',
      findings: [finding()],
      touches_reviewer_instructions: [],
      reviewer: {
        tool: 'codex',
        fallback_used: false,
        structured: true,
        session_id: 's',
        model: 'gpt-5.4',
        calls: 1,
        duration_ms: 41200,
        cost_usd: 0.0094,
        raw_output_path: '/h/raw.out',
      },
      next: 'reply',
      rounds_left: 2,
    })
    expect(line(review, 'review')).toBe('round 1: changes requested, 1 finding')
    expect(line(review, 'reviewer')).toBe('codex, gpt-5.4, 1 call, 41.2 s, $0.0094')
    expect(line(review, 'next')).toBe('reply (2 rounds left)')
    expect(review).not.toMatch(/fallback_used|duration_ms|tool /)
    const finish = documentText('finish', {
      run_id: RUN,
      verdict: 'APPROVED',
      rounds: 2,
      cost_usd: 0.4,
      pr_body_path: '/h/pr.md',
      pr: 7,
      pr_url: 'https://github.com/o/r/pull/7',
    })
    expect(line(finish, 'finished')).toBe('approved after 2 rounds')
    expect(line(finish, 'cost')).toBe('$0.4000')
    expect(line(finish, 'PR')).toBe('#7 https://github.com/o/r/pull/7')
    expect(finish).not.toMatch(/cost_usd|pr_body_path/)
  })
})

describe('status --all --text', () => {
  it('has the cost, the repository and the date of each run', () => {
    const run = {
      run_id: RUN,
      phase: 'finished',
      round: 2,
      next: null,
      task: 'Fix sum()',
      repo: '/work/app',
      created_at: '2026-11-30T05:15:00.000Z',
      open_findings: 0,
      outcome: 'APPROVED',
      pr: 7,
      merged_at: null,
      cost_usd: 0.144,
      measured: true,
    }
    const text = documentText('status', {
      runs: [run],
      unreadable: [],
      merged_prs: { count: 0, usd_per_merged_pr: null },
    })
    expect(text).toMatch(/^RUN +STARTED +REPO +STATE +NEXT +OPEN +COST +PR$/m)
    expect(text).toMatch(new RegExp(`^${RUN} +2026-11-30 +app +approved +- +0 +\\$0\\.1440 +#7$`, 'm'))
    expect(text).toMatch(/^ {2}Fix sum\(\)$/m)
  })

  for (const width of [100, 80])
    it(`keeps an active run's id whole within ${width} columns, so it can be passed to --run`, () => {
      const run = {
        run_id: RUN,
        phase: 'reviewing',
        round: 3,
        next: 'review',
        task: 'Fix sum()',
        repo: '/work/app',
        created_at: '2026-11-30T05:15:00.000Z',
        open_findings: 0,
        outcome: null,
        pr: null,
        merged_at: null,
        cost_usd: 0.0123,
        measured: false,
      }
      const text = documentText('status', { runs: [run], unreadable: [] }, width)
      const row = text.split('\n').find((l) => l.includes('reviewing'))
      expect(row?.split(/ +/)[0]).toBe(RUN)
      for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(width)
    })
})

describe('a text view fits the terminal', () => {
  const findings = {
    run_id: RUN,
    verdict: null,
    findings: [{ ...finding({ text: LONG }), reply: null, status: 'open' }],
  }
  for (const width of [60, 100, 160])
    it(`wraps a ${LONG.length}-character finding within ${width} columns, all of its words kept`, () => {
      const text = documentText('findings', findings, width)
      for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(width)
      expect(text.replace(/\s+/g, ' ')).toContain(LONG.split(' ').slice(-5).join(' '))
    })

  it('wraps status and its open findings too', () => {
    const text = documentText(
      'status',
      status({ task: LONG, open_findings: [{ ...finding({ text: LONG }), line: 3 }] }),
      80,
    )
    for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(80)
  })
})
