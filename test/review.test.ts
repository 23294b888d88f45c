import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { renderHandoff } from '../lib/run/handoff.ts'
import { parseFindings, parseVerdict } from '../lib/run/grammar.ts'
import { updateRun } from '../lib/run/store.ts'
import { sandbox, tempDir, writeFiles, writeTestHomeConfig } from './_helpers.ts'
import { expectError, expectOk, runDisk, runInReview, startRun, type Sandbox, writeChange } from './_expect.ts'
import { pathWithout } from './_path.ts'
import { claudeFolder, OPUS_41, writeSession } from './cost/_spend.ts'
import { approveNow, deadPid, handoffText, reviewArgs, sandboxInReview, SLOW, stubPath, waitFor } from './_review.ts'

const replyArgs = (finding: string, disposition: string) => [
  'reply',
  '--finding',
  finding,
  '--disposition',
  disposition,
  '--body-file',
  '-',
]

describe('review: what each stub reviewer ends as', () => {
  it(
    'records an approving review: APPROVED, no findings, phase approved, finish next',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('approve')))
      expect(doc).toMatchObject({
        run_id: runId,
        round: 1,
        verdict: 'APPROVED',
        findings: [],
        next: 'finish',
        rounds_left: 2,
      })
      expect(doc.reviewer).toMatchObject({
        tool: 'custom',
        fallback_used: false,
        calls: 1,
        raw_output_path: expect.stringContaining(join(sb.home, 'runs', runId)),
      })
      const state = sb.state(runId)
      expect(state).toMatchObject({ phase: 'approved', review_claim: null, failed_reviews: [] })
      expect(state.rounds[0]!.reviewer).toMatchObject({ tool: 'custom', verdict: 'APPROVED', findings: [], calls: 1 })
      expect(handoffText(sb)).toBe(renderHandoff(state))
      expect(handoffText(sb)).toContain('VERDICT: APPROVED')
    },
    SLOW,
  )

  it(
    'records requested changes: two findings 1.1 and 1.2 with keys, phase coding, reply next',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('changes')))
      expect(doc).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply', rounds_left: 2 })
      expect(doc.findings).toEqual([
        {
          id: '1.1',
          round: 1,
          n: 1,
          key: expect.stringMatching(/^[0-9a-f]{16}$/),
          category: 'bug',
          severity: 'major',
          path: 'src/a.ts',
          line_start: 3,
          line_end: 5,
          text: 'the loop bound is off by one: the last element is never visited',
          recurring: false,
          recurring_of: null,
        },
        {
          id: '1.2',
          round: 1,
          n: 2,
          key: expect.stringMatching(/^[0-9a-f]{16}$/),
          category: 'tests',
          severity: null,
          path: 'src/a.test.ts',
          line_start: 1,
          line_end: 1,
          text: 'no test covers an empty input',
          recurring: false,
          recurring_of: null,
        },
      ])
      expect(doc.findings[0].key).not.toBe(doc.findings[1].key)
      const state = sb.state(runId)
      expect(state.phase).toBe('coding')
      expect(state.rounds[0]!.reviewer!.findings).toEqual(doc.findings)
      expect(handoffText(sb)).toContain('1. [bug/major] src/a.ts:3-5 — the loop bound is off by one')
    },
    SLOW,
  )

  it(
    'asks once more when the first answer has no verdict, and records both calls on the round',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      const result = await sb.cli(reviewArgs('no-verdict-then-verdict'), { env: { STUB_STATE_DIR: stateDir } })
      const doc = expectOk(result)
      expect(doc).toMatchObject({ verdict: 'APPROVED', next: 'finish', reviewer: { calls: 2 } })
      expect(readFileSync(join(stateDir, 'count'), 'utf8').trim()).toBe('2')
      const reask = readFileSync(join(stateDir, 'prompt-2.txt'), 'utf8')
      expect(reask).toContain('Your previous answer had no verdict line')
      expect(reask).toContain('the helper name does not say what it returns')
      expect(result.stderr).toMatch(/no verdict line; asking once more/)
      expect(sb.state(runId).rounds[0]!.reviewer).toMatchObject({ verdict: 'APPROVED', calls: 2 })
    },
    SLOW,
  )

  it(
    'requests changes with a synthetic [format] finding when the reviewer never gives a verdict, after exactly two calls',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      const doc = expectOk(await sb.cli(reviewArgs('no-verdict'), { env: { STUB_STATE_DIR: stateDir } }))
      expect(readFileSync(join(stateDir, 'count'), 'utf8').trim()).toBe('2')
      expect(doc).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply', reviewer: { calls: 2 } })
      expect(doc.findings.map((f: { id: string; category: string }) => [f.id, f.category])).toEqual([
        ['1.1', 'design'],
        ['1.2', 'format'],
      ])
      expect(doc.findings[1]).toMatchObject({
        path: null,
        line_start: null,
        text: expect.stringMatching(/no `VERDICT:` line/),
      })
      expect(sb.state(runId)).toMatchObject({
        phase: 'coding',
        rounds: [{ reviewer: { calls: 2, verdict: 'CHANGES_REQUESTED' } }],
      })
    },
    SLOW,
  )

  it(
    'approves a huge review promptly, keeping its summary capped and its raw output beside the state',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('huge')))
      expect(doc).toMatchObject({ verdict: 'APPROVED', findings: [], reviewer: { calls: 1 } })
      const review = sb.state(runId).rounds[0]!.reviewer!
      expect(review.summary.length).toBeLessThan(5_000)
      expect(review.summary).toMatch(/more characters in the raw output\]$/)
      expect(statSync(join(sb.home, 'runs', `${runId}.json`)).size).toBeLessThan(50_000)
      expect(Buffer.byteLength(handoffText(sb))).toBeLessThan(20_000)
      expect(statSync(review.raw_output_path!).size).toBeGreaterThan(10 * 1024 * 1024)
    },
    SLOW,
  )

  it(
    'reads no verdict from a sentence, a blockquote or a code block',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('quoted-verdict')))
      expect(doc.verdict).toBe('CHANGES_REQUESTED')
      expect(doc.findings.map((f: { id: string }) => f.id)).toEqual(['1.1', '1.2'])
      expect(sb.state(runId).phase).toBe('coding')
    },
    SLOW,
  )

  it(
    'keeps a hostile review from forging HANDOFF.md structure or leaking escape and NUL bytes',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const result = await sb.cli(reviewArgs('hostile'))
      const doc = expectOk(result)
      expect(doc.verdict).toBe('CHANGES_REQUESTED')
      expect(doc.findings.map((f: { category: string; severity: string }) => `${f.category}/${f.severity}`)).toEqual([
        'security/blocker',
        'correctness/major',
        'ux/minor',
      ])
      const handoff = handoffText(sb)
      const lines = handoff.split('\n')
      expect(lines.filter((line) => line.startsWith('## ')).map((line) => line.replace(/ · .*$/, ''))).toEqual([
        '## Round 1 — CODER (claude)',
        '## Round 1 — REVIEWER (builtin:hostile)', // named as what reviewed: the stub, never a vendor
      ])
      expect(lines.filter((line) => /^\s*verdict\s*:/i.test(line))).toEqual(['VERDICT: CHANGES_REQUESTED'])
      expect(lines.filter((line) => /^\s*\d+[.)]\s/.test(line))).toHaveLength(3)
      expect(parseVerdict(handoff)).toBe('CHANGES_REQUESTED')
      expect(parseFindings(handoff)).toHaveLength(3)
      // the findings section holds the three real findings and nothing else: no forged reply under a finding
      const section = lines.slice(lines.indexOf('### Findings') + 1, lines.lastIndexOf('VERDICT: CHANGES_REQUESTED'))
      expect(section.map((line) => line.slice(0, 3))).toEqual(['1. ', '2. ', '3. '])
      const stateText = readFileSync(join(sb.home, 'runs', `${runId}.json`), 'utf8')
      for (const [where, text] of [
        ['HANDOFF.md', handoff],
        ['the state file', stateText],
        ['stdout', result.stdout],
        ['stderr', result.stderr],
      ]) {
        expect(text!.includes('\x1b'), `ESC in ${where}`).toBe(false)
        expect(text!.includes('\x00'), `NUL in ${where}`).toBe(false)
      }
      expect(stateText).not.toMatch(/\\u001b|\\u0000/)
    },
    SLOW,
  )

  it(
    'judges a reviewer that exits without reading a large prompt by its answer, not by the broken pipe',
    async () => {
      const sb = sandbox()
      await startRun(sb)
      writeFiles(sb.repo, { 'large.txt': 'a line of the large file that makes the prompt big\n'.repeat(3_000) })
      expectOk(await sb.cli(['coder-done', '--summary', 'a large change']))
      const doc = expectOk(
        await sb.cli(['review', '--reviewer-cmd', JSON.stringify(['sh', '-c', 'echo "VERDICT: APPROVED"'])]),
      )
      expect(doc.verdict).toBe('APPROVED')
    },
    SLOW,
  )

  it(
    "records a Claude JSON reviewer's session id, model, usage and cost on the round",
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('claude-json')))
      expect(doc).toMatchObject({
        verdict: 'APPROVED',
        reviewer: { session_id: '6b1d2c3e-0000-4000-8000-000000000002', model: 'claude-sonnet-4-5-20250929' },
      })
      expect(doc.reviewer.cost_usd).toBeGreaterThan(0)
      const review = sb.state(runId).rounds[0]!.reviewer!
      expect(review).toMatchObject({
        session_id: '6b1d2c3e-0000-4000-8000-000000000002',
        model: 'claude-sonnet-4-5-20250929',
      })
      expect(review.usage).toMatchObject({
        input_tokens: 10,
        output_tokens: 50,
        cache_creation_input_tokens: 1000,
        cache_read_input_tokens: 2000,
      })
      expect(review.cost!.usd).toBeGreaterThan(0)
      expect(review.cost!.reported_usd).toBeCloseTo(0.00603, 8)
    },
    SLOW,
  )

  it(
    "records a Codex JSON-lines reviewer's thread id, usage and its last message's findings",
    async () => {
      const { sb, runId } = await sandboxInReview()
      const doc = expectOk(await sb.cli(reviewArgs('codex-jsonl')))
      expect(doc).toMatchObject({
        verdict: 'CHANGES_REQUESTED',
        reviewer: { session_id: '01a2b3c4-0000-7000-8000-000000000002' },
      })
      expect(doc.findings.map((f: { id: string; category: string }) => [f.id, f.category])).toEqual([
        ['1.1', 'bug'],
        ['1.2', 'tests'],
      ])
      const review = sb.state(runId).rounds[0]!.reviewer!
      expect(review.session_id).toBe('01a2b3c4-0000-7000-8000-000000000002')
      expect(review.usage).toMatchObject({
        input_tokens: 2345,
        cached_input_tokens: 1024,
        cache_creation_input_tokens: 256,
        output_tokens: 67,
        reasoning_output_tokens: 12,
      })
      expect(review.summary).not.toContain('I will read the diff first.')
    },
    SLOW,
  )
})

describe('review: phases and the claim', () => {
  it(
    'refuses a run that is not in review with wrong_phase and changes nothing',
    async () => {
      const sb = sandbox()
      expectOk(await sb.cli(['start', '--task', 'demo task']))
      const before = runDisk(sb)
      expect(expectError(await sb.cli(reviewArgs('approve')), 'wrong_phase')).toMatchObject({
        phase: 'coding',
        next: 'coder-done',
      })
      expect(runDisk(sb)).toEqual(before)
    },
    SLOW,
  )

  it(
    'refuses a malformed --reviewer-cmd or --timeout as usage, and changes nothing',
    async () => {
      const { sb } = await sandboxInReview()
      const before = runDisk(sb)
      for (const bad of ['sh review.sh', '[]', '["sh", 3]', '{"cmd":"sh"}']) {
        expect(expectError(await sb.cli(['review', '--reviewer-cmd', bad]), 'usage').message).toMatch(
          /--reviewer-cmd must be a JSON array/,
        )
      }
      for (const bad of ['0', 'soon', '1.5']) {
        expect(expectError(await sb.cli(reviewArgs('approve', '--timeout', bad)), 'usage').message).toMatch(/timeout/)
      }
      expect(runDisk(sb)).toEqual(before)
    },
    SLOW,
  )

  it(
    'attaches a second review to the first while it is still running: no second call, and the first ends as it would',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      const env = { STUB_STATE_DIR: stateDir }
      const first = sb.cli(reviewArgs('hang', '--timeout', '3'), { env })
      await waitFor(() => sb.state(runId).review_claim?.reviewer_pgid, 'the first review to call its reviewer')
      const second = await sb.cli(reviewArgs('approve'), { env })
      expectError(second, 'reviewer_timeout')
      expectError(await first, 'reviewer_timeout')
      expect(readFileSync(join(stateDir, 'count'), 'utf8').trim()).toBe('1')
      const state = sb.state(runId)
      expect(state).toMatchObject({ phase: 'reviewing', review_claim: null })
      expect(state.failed_reviews.map((f) => f.code)).toEqual(['reviewer_timeout'])
      await approveNow(sb)
    },
    SLOW,
  )

  it(
    'waits on a claim a live process on this host holds, prints it in flight at --wait, and changes nothing',
    async () => {
      const { sb, runId } = await sandboxInReview()
      await updateRun(
        runId,
        (state) => ({
          state: {
            ...state,
            review_claim: {
              pid: process.pid,
              host: hostname(),
              started_at: new Date().toISOString(),
              pid_start: null,
              expires_at: null,
              reviewer_pgid: null,
              reviewer_start: null,
            },
          },
          result: undefined,
        }),
        { home: sb.home },
      )
      const before = runDisk(sb)
      // a process of its own: the claim's holder (this test's process) is another process than the review's
      const waited = expectOk(await sb.cliProcess(reviewArgs('approve', '--wait', '1')))
      expect(waited).toMatchObject({ in_progress: true, wait_s: 1, worker: { pid: process.pid }, next: 'review' })
      expect(runDisk(sb)).toEqual(before)
    },
    SLOW,
  )

  it(
    'takes over a claim left by a process that has died',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const pid = deadPid()
      await updateRun(
        runId,
        (state) => ({
          state: {
            ...state,
            review_claim: {
              pid,
              host: hostname(),
              started_at: '2026-01-01T00:00:00.000Z',
              pid_start: null,
              expires_at: null,
              reviewer_pgid: null,
              reviewer_start: null,
            },
          },
          result: undefined,
        }),
        { home: sb.home },
      )
      await approveNow(sb)
      expect(sb.state(runId)).toMatchObject({ phase: 'approved', review_claim: null })
    },
    SLOW,
  )
})

describe('review: findings that come back', () => {
  it(
    'marks a finding answered wont-fix and raised again (on another line) as recurring, with its earlier id',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const round1 = '1. [bug/major] src/a.ts:3 — the loop bound is off by one'
      const r1 = expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: round1 } }))
      expect(r1.findings).toHaveLength(1)
      expectOk(await sb.cli(replyArgs('1.1', 'wont-fix'), { input: 'the bound is inclusive by design' }))
      expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
      const round2 = [
        '1. [bug/major] src/a.ts:17 — the loop bound is off by one',
        '2. [docs] README.md:1 — the new flag is not documented',
      ].join('\n')
      const r2 = expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: round2 } }))
      expect(r2.round).toBe(2)
      expect(r2.findings).toEqual([
        expect.objectContaining({
          id: '2.1',
          key: r1.findings[0].key,
          line_start: 17,
          recurring: true,
          recurring_of: '1.1',
        }),
        expect.objectContaining({ id: '2.2', recurring: false, recurring_of: null }),
      ])
      expect(sb.state(runId).rounds[1]!.reviewer!.findings[0]).toMatchObject({ recurring: true, recurring_of: '1.1' })
      expect(handoffText(sb)).toContain('(recurring: 1.1)')
    },
    SLOW,
  )
})

/** A bin directory holding only the given fake CLIs, then this machine's PATH without a claude or codex of its own. */
function restrictedPath(fakes: Record<string, string>): string {
  const bin = tempDir('pl-bin-')
  for (const [name, script] of Object.entries(fakes)) {
    writeFileSync(join(bin, name), script)
    chmodSync(join(bin, name), 0o755)
  }
  return `${bin}:${pathWithout(['claude', 'codex'])}`
}

function writeConfig(sb: Sandbox, config: Record<string, Record<string, unknown>>): void {
  writeTestHomeConfig(sb.home, config)
}

/** A run in review whose start ran on `PATH`: start records the reviewer CLIs it finds there (a review never looks). */
async function runInReviewOn(sb: Sandbox, PATH: string): Promise<string> {
  const runId = expectOk(await sb.cli(['start', '--task', 'demo task'], { env: { PATH } })).run_id as string
  writeChange(sb)
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  return runId
}

describe('review: which reviewer runs', () => {
  it(
    "falls back to claude, first on the person's reviewers_fallback, when the run's reviewer (codex) is missing, and remembers it on the run",
    async () => {
      const sb = sandbox()
      // the coder is claude: a claude fallback reviews its own vendor's work, which the person allows here
      const person = { reviewers_fallback: ['claude'], allow_same_vendor: true }
      writeConfig(sb, { pair_loop: { codex_bin: 'codex-not-installed-here', ...person } })
      const argvFile = join(tempDir('pl-argv-'), 'argv.txt')
      const PATH = restrictedPath({
        claude: `#!/bin/sh\nprintf '%s\\n' "$@" > '${argvFile}'\nexec sh '${stubPath('claude-json')}'\n`,
      })
      const runId = await runInReviewOn(sb, PATH)
      const result = await sb.cli(['review'], { env: { PATH } })
      const doc = expectOk(result)
      expect(doc).toMatchObject({
        verdict: 'APPROVED',
        reviewer: { tool: 'claude', fallback_used: true, session_id: '6b1d2c3e-0000-4000-8000-000000000002' },
      })
      expect(result.stderr).toMatch(/codex CLI is missing; falling back to claude/)
      const state = sb.state(runId)
      expect(state.reviewer).toBe('codex')
      expect(state.reviewer_fallback).toBe(true)
      expect(state.rounds[0]!.reviewer).toMatchObject({ tool: 'claude', fallback_used: true })
      expect(handoffText(sb)).toContain('(fallback used)')
      const argv = readFileSync(argvFile, 'utf8').split('\n')
      expect(argv.slice(0, 3)).toEqual(['-p', '--output-format', 'json'])
      expect(argv.join(' ')).not.toContain('demo task') // the prompt goes on stdin, never in argv
    },
    SLOW,
  )

  const fallbackCases = [
    ['no reviewers_fallback', {}, ['codex-not-installed-here']],
    [
      "a fallback of the coder's own vendor without allow_same_vendor",
      { reviewers_fallback: ['claude'] },
      ['codex-not-installed-here'],
    ],
  ] as const
  for (const [name, person, tried] of fallbackCases)
    it(
      `gives reviewer_unavailable when the run's reviewer is missing with ${name}, trying ${tried.join(', ')}, and changes nothing`,
      async () => {
        const sb = sandbox()
        writeConfig(sb, { pair_loop: { codex_bin: 'codex-not-installed-here', ...person } })
        // a claude is there (start records it): only the person's list and allow_same_vendor keep it from reviewing; the
        // first test of this block is the control, where both allow it and it reviews
        const PATH = restrictedPath({ claude: `#!/bin/sh\nexec sh '${stubPath('claude-json')}'\n` })
        const runId = await runInReviewOn(sb, PATH)
        const before = runDisk(sb)
        const result = await sb.cli(['review'], { env: { PATH: restrictedPath({}) } })
        expect(result.code).toBe(14)
        expect(expectError(result, 'reviewer_unavailable').tried).toEqual(tried)
        expect(runDisk(sb)).toEqual(before)
        expect(sb.state(runId)).toMatchObject({ phase: 'reviewing', review_claim: null, failed_reviews: [] })
      },
      SLOW,
    )

  it(
    'gives reviewer_unavailable when neither CLI is on PATH and no command is set, and changes nothing',
    async () => {
      const sb = sandbox()
      writeConfig(sb, {
        pair_loop: { codex_bin: 'codex-not-installed-here', reviewers_fallback: ['claude'], allow_same_vendor: true },
      })
      const PATH = restrictedPath({})
      const runId = await runInReviewOn(sb, PATH)
      const before = runDisk(sb)
      const result = await sb.cli(['review'], { env: { PATH } })
      expect(result.code).toBe(14)
      expect(expectError(result, 'reviewer_unavailable').tried).toEqual(['codex-not-installed-here', 'claude'])
      expect(runDisk(sb)).toEqual(before)
      expect(sb.state(runId)).toMatchObject({ phase: 'reviewing', review_claim: null, failed_reviews: [] })
    },
    SLOW,
  )

  it(
    'uses a reviewer command from config when no --reviewer-cmd is given',
    async () => {
      const sb = sandbox()
      writeConfig(sb, { pair_loop: { reviewer_cmd: ['sh', stubPath('approve')] } })
      const runId = await runInReview(sb)
      expect(expectOk(await sb.cli(['review']))).toMatchObject({
        verdict: 'APPROVED',
        reviewer: { tool: 'custom', fallback_used: false },
      })
      expect(sb.state(runId).reviewer_fallback).toBe(false)
    },
    SLOW,
  )
})

describe('review: the budget brake', () => {
  const CODER_SESSION = 'c0de0000-0000-4000-8000-000000000001'

  it(
    'refuses a review at or over the budget in a round with no go-on (budget_exceeded), unless --over-budget, which is recorded',
    async () => {
      const sb = sandbox()
      const runId = await runInReview(sb, ['--budget-usd', '5']) // handed over with nothing spent: no go-on asked
      // the coder's session spends on after the hand-over: $75 (a million Opus 4.1 output tokens, $75 per million)
      writeSession(claudeFolder(sb), CODER_SESSION, [{ model: OPUS_41, output: 1_000_000 }])
      // the loop's own check first: it asks the person, and remembers the spend seen (the run's high-water mark)
      expect((await sb.cli(['budget-check'])).code).toBe(13)
      const before = runDisk(sb)
      const refused = await sb.cli(reviewArgs('approve'))
      expect(refused.code).toBe(13)
      expect(expectError(refused, 'budget_exceeded')).toMatchObject({ run_id: runId, limit_usd: 5, next: 'ask-user' })
      expect(runDisk(sb)).toEqual(before)
      expect(sb.state(runId).budget_overrides).toEqual([])
      const doc = expectOk(await sb.cli(reviewArgs('approve', '--over-budget')))
      expect(doc).toMatchObject({ round: 1, verdict: 'APPROVED' })
      const state = sb.state(runId)
      expect(state.budget_overrides).toEqual([expect.objectContaining({ command: 'review', round: 1, limit_usd: 5 })])
      expect(state.budget_overrides[0]!.spent_usd).toBeCloseTo(75, 9)
      expect(state.rounds[0]!.reviewer!.over_budget).toBe(true)
    },
    SLOW,
  )
})
