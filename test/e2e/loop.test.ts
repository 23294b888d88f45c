// The whole loop through the real pair-loop CLI with the real reviewer CLIs (codex and claude) against the mock
// model API: a review that asks for changes, the coder's replies and fix, an approval, finish; roles swapped;
// a dead model API; the usage the mock sent recorded on the round; the prompt the mock received.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, git, githubWithPrs, isolatedEnv, makeRepo, writeFiles } from '../_helpers.ts'
import {
  CLAUDE_BIN,
  CLAUDE_MODEL,
  CODEX_BIN,
  MOCK_USAGE,
  REVIEW_TIMEOUT_S,
  TEST_TIMEOUT_MS,
  claudeCost,
  codexCost,
  findClaudeTranscript,
  findCodexRollout,
  promptIn,
  removeLater,
  requireClis,
  runPairLoop,
  startMock,
  useMock,
  unusedPort,
  withReviewerVars,
  addToHomeConfig,
  writeCodexConfig,
} from './_harness.ts'

const REVIEW_TIMEOUT = String(REVIEW_TIMEOUT_S)
const FAST_FAILURE_MS = 15_000

const ROUND1_REVIEW = [
  'Two problems in the change.',
  '',
  '1. [bug/major] src/a.ts:3 — the loop bound is off by one: `<=` reads past the end of the array',
  '2. [tests/minor] src/new-helper.ts:1 — the new helper has no test',
  '',
  'VERDICT: CHANGES_REQUESTED',
].join('\n')
const ROUND2_REVIEW = 'Both findings are addressed: the bound is fixed and the helper is covered.\n\nVERDICT: APPROVED'

const FILES = {
  'README.md': '# demo\n',
  'src/a.ts':
    'export function sum(xs: number[]): number {\n  let total = 0\n  for (let i = 0; i < xs.length; i++) total += xs[i]\n  return total\n}\n',
}

/** A repo, a home whose config points pair-loop at the real binaries, and the env the CLIs inherit. */
function loopSandbox(port: number, config: Record<string, unknown> = {}) {
  const repo = makeRepo(FILES)
  const env = withReviewerVars(isolatedEnv(), port)
  removeLater(dirname(repo)) // makeRepo's temp root
  removeLater(env.HOME)
  addToHomeConfig(env.PAIR_LOOP_HOME, { claude_bin: CLAUDE_BIN, codex_bin: CODEX_BIN, ...config })
  const cli = (args: string[], input?: string) => runPairLoop(CLI_COMMAND, args, { cwd: repo, env, input })
  const state = (runId: string) => JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'runs', `${runId}.json`), 'utf8'))
  return { repo, env, cli, state }
}

const indexHash = (repo: string) =>
  createHash('sha256')
    .update(readFileSync(join(repo, '.git', 'index')))
    .digest('hex')

function ok(result: { code: number | null; stdout: string; stderr: string }, what: string) {
  expect(result.code, `${what} failed\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
}

describe.skipIf(!requireClis())('the loop with the real reviewer CLIs', () => {
  const mock = useMock()

  it(
    'codex requests changes, the coder replies and fixes, codex approves, finish APPROVED; usage and prompt recorded',
    async () => {
      const sb = loopSandbox(mock.port)
      const task = 'Fix the sum helper (e2e codex loop)'
      const start = await sb.cli(['start', '--task', task])
      ok(start, 'start')
      expect(start.json).toMatchObject({ coder: 'claude', reviewer: 'codex', next: 'coder-done' })
      const runId: string = start.json.run_id

      // round 1: a change plus a new untracked file
      writeFiles(sb.repo, {
        'src/a.ts': FILES['src/a.ts'].replace('i < xs.length', 'i <= xs.length'),
        'src/new-helper.ts': 'export const NEW_HELPER_MARKER = "e2e-untracked-7f3a"\n',
      })
      ok(await sb.cli(['coder-done', '--summary', 'first pass at the helper']), 'coder-done 1')

      mock.setScript([{ api: 'openai', text: ROUND1_REVIEW, label: 'round-1' }])
      expect(existsSync(join(sb.repo, 'HANDOFF.md'))).toBe(true) // there, so leaving it out of the diff means something
      const indexBefore = indexHash(sb.repo)
      const before = mock.modelCalls().length
      const review1 = await sb.cli(['review', '--timeout', REVIEW_TIMEOUT])
      ok(review1, 'review 1')
      expect(indexHash(sb.repo), "review must not touch the user's index").toBe(indexBefore)
      expect(review1.json).toMatchObject({ round: 1, verdict: 'CHANGES_REQUESTED', reviewer: { tool: 'codex' } })
      expect(JSON.stringify(review1.json.findings)).toContain('1.1')
      expect(review1.json.next).toBe('reply')

      // the reviewer really was codex, through the mock, once
      const calls1 = mock.modelCalls().slice(before)
      expect(calls1.map((c) => [c.api, c.label, c.auth])).toEqual([['openai', 'round-1', 'bearer']])
      // asked for the answer schema; the mock answered with the object its text describes, and that was read
      expect(calls1[0]!.wants_structured).toBe(true)
      expect(review1.json.reviewer.structured).toBe(true)
      expect(mock.script()).toEqual([])

      // (d) the prompt the mock received: the untracked file is in the diff, HANDOFF.md is not
      const prompt1 = promptIn(mock.body(calls1[0]!), task)
      expect(prompt1, 'the pair-loop prompt was not in the request body').toBeDefined()
      expect(prompt1).toContain('src/new-helper.ts')
      expect(prompt1).toContain('e2e-untracked-7f3a')
      expect(prompt1).toContain('i <= xs.length')
      expect(prompt1).not.toContain('HANDOFF.md')
      expect(prompt1).not.toContain('Pair-Loop Handoff')

      // (d) the usage the mock sent is on the recorded round, with the thread id and its rollout
      let state = sb.state(runId)
      expect(state.phase).toBe('coding')
      const reviewer1 = state.rounds[0].reviewer
      expect(reviewer1).toMatchObject({ tool: 'codex', fallback_used: false, verdict: 'CHANGES_REQUESTED' })
      expect(reviewer1.usage).toMatchObject({
        input_tokens: MOCK_USAGE.codex.input_tokens,
        output_tokens: MOCK_USAGE.codex.output_tokens,
        cached_input_tokens: MOCK_USAGE.codex.cached_input_tokens,
        cache_creation_input_tokens: MOCK_USAGE.codex.cache_write_input_tokens,
        reasoning_output_tokens: MOCK_USAGE.codex.reasoning_output_tokens,
      })
      expect(reviewer1.findings.map((f: any) => [f.id, f.category, f.severity, f.path, f.line_start])).toEqual([
        ['1.1', 'bug', 'major', 'src/a.ts', 3],
        ['1.2', 'tests', 'minor', 'src/new-helper.ts', 1],
      ])
      expect(findCodexRollout(sb.env.CODEX_HOME!, reviewer1.session_id)).toBeDefined()
      // gpt-5.5: 1065 uncached × 5 + 1024 cached × 0.5 + 256 written × 6.25 + 67 out × 30 per M = 0.009447
      const codexRoundUsd = codexCost(MOCK_USAGE.codex)
      expect(codexRoundUsd).toBeCloseTo(0.009447, 10)
      expect(reviewer1.cost?.usd).toBeCloseTo(codexRoundUsd, 9)

      // the coder answers and fixes
      ok(
        await sb.cli(
          ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'],
          'Bound is `<` again.',
        ),
        'reply 1.1',
      )
      ok(
        await sb.cli(
          ['reply', '--finding', '1.2', '--disposition', 'wont-fix', '--body-file', '-'],
          'A test lands in the next PR.',
        ),
        'reply 1.2',
      )
      writeFiles(sb.repo, { 'src/a.ts': FILES['src/a.ts'] })
      ok(await sb.cli(['coder-done', '--summary', 'fixed the bound', '--findings-addressed', '2']), 'coder-done 2')

      // round 2: codex approves; the prompt shows the coder's replies
      mock.setScript([{ api: 'openai', text: ROUND2_REVIEW, label: 'round-2' }])
      const review2 = await sb.cli(['review', '--timeout', REVIEW_TIMEOUT])
      ok(review2, 'review 2')
      expect(review2.json).toMatchObject({ round: 2, verdict: 'APPROVED', reviewer: { tool: 'codex' }, next: 'finish' })
      const calls2 = mock.modelCalls().filter((c) => c.label === 'round-2')
      expect(calls2).toHaveLength(1)
      const prompt2 = promptIn(mock.body(calls2[0]!), task)!
      expect(prompt2).toContain('A test lands in the next PR.')
      expect(prompt2).toContain('wont-fix')

      state = sb.state(runId)
      expect(state.phase).toBe('approved')

      // the run's cost so far: two codex reviewer calls (the coder, claude, has no session here)
      const budget = await sb.cli(['budget-check'])
      ok(budget, 'budget-check')
      expect(budget.json.spent).toBeCloseTo(2 * codexRoundUsd, 9)
      expect(budget.json.by_role.reviewer).toMatchObject({ calls: 2, failed_calls: 0 })
      expect(budget.json.unpriced_models).toEqual([])

      const finish = await sb.cli(['finish', '--verdict', 'APPROVED'])
      ok(finish, 'finish')
      expect(finish.json).toMatchObject({ verdict: 'APPROVED', rounds: 2 })
      state = sb.state(runId)
      expect(state.phase).toBe('finished')
      expect(state.outcome.verdict).toBe('APPROVED')
      expect(state.failed_reviews).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'roles swapped: claude reviews (reviewer_model set) and approves; its usage and cost are recorded',
    async () => {
      const sb = loopSandbox(mock.port, { reviewer_model: CLAUDE_MODEL })
      const task = 'Tidy the sum helper (e2e claude review)'
      const start = await sb.cli(['start', '--task', task, '--reviewer', 'claude', '--coder', 'codex'])
      ok(start, 'start')
      expect(start.json).toMatchObject({ coder: 'codex', reviewer: 'claude' })
      const runId: string = start.json.run_id
      writeFiles(sb.repo, { 'src/a.ts': `// sums numbers\n${FILES['src/a.ts']}` })
      ok(await sb.cli(['coder-done', '--summary', 'added a comment']), 'coder-done')

      mock.setScript([{ api: 'anthropic', text: 'Looks right to me.\n\nVERDICT: APPROVED', label: 'claude-review' }])
      const before = mock.modelCalls().length
      const review = await sb.cli(['review', '--timeout', REVIEW_TIMEOUT])
      ok(review, 'review')
      expect(review.json).toMatchObject({ round: 1, verdict: 'APPROVED', reviewer: { tool: 'claude' }, next: 'finish' })

      const calls = mock.modelCalls().slice(before)
      expect(calls.map((c) => [c.api, c.label, c.auth, c.model, c.wants_structured])).toEqual([
        ['anthropic', 'claude-review', 'x-api-key', CLAUDE_MODEL, true],
      ])
      expect(review.json.reviewer.structured).toBe(true)
      expect(promptIn(mock.body(calls[0]!), task)).toContain('// sums numbers')

      const state = sb.state(runId)
      expect(state.phase).toBe('approved')
      const reviewer = state.rounds[0].reviewer
      expect(reviewer).toMatchObject({ tool: 'claude', fallback_used: false, verdict: 'APPROVED', findings: [] })
      expect(reviewer.model).toContain(CLAUDE_MODEL)
      const a = MOCK_USAGE.anthropic
      expect(reviewer.usage).toMatchObject({
        input_tokens: a.input_tokens,
        output_tokens: a.output_tokens,
        cache_creation_input_tokens: a.cache_creation_input_tokens,
        cache_read_input_tokens: a.cache_read_input_tokens,
        cache_write_5m_tokens: a.cache_creation.ephemeral_5m_input_tokens,
        cache_write_1h_tokens: a.cache_creation.ephemeral_1h_input_tokens,
      })
      expect(reviewer.cost?.usd).toBeCloseTo(claudeCost(a), 8) // 0.00947205
      expect(findClaudeTranscript(sb.env.CLAUDE_CONFIG_DIR!, reviewer.session_id)).toBeDefined()

      // what budget-check reports for the round equals claude -p's own total_cost_usd, and its transcript agrees
      const raw = JSON.parse(readFileSync(reviewer.raw_output_path, 'utf8'))
      expect(reviewer.cost?.reported_usd).toBe(raw.total_cost_usd)
      expect(reviewer.cost?.transcript_usd).toBeCloseTo(raw.total_cost_usd, 9)
      const budget = await sb.cli(['budget-check'])
      ok(budget, 'budget-check')
      expect(budget.json.spent).toBeCloseTo(raw.total_cost_usd, 9)
      expect(budget.json.by_role.reviewer).toMatchObject({ calls: 1, failed_calls: 0 })

      // ship it: the approved change committed, the PR opened through the fake gh (its head: what was pushed), and
      // verify agrees with the head tree git itself computes
      git(sb.repo, ['add', 'src/a.ts'], sb.env)
      git(sb.repo, ['commit', '-qm', 'the approved change'], sb.env)
      Object.assign(sb.env, githubWithPrs(sb.repo, []))
      const finish = await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr'])
      ok(finish, 'finish')
      expect(finish.json.pr).toBe(42)
      expect(sb.state(runId).phase).toBe('finished')
      const verified = await sb.cli(['verify'])
      ok(verified, 'verify')
      expect(verified.json).toMatchObject({ matches: true, pr: 42, source: 'github' })
      expect(verified.json.head_tree).toBe(git(sb.repo, ['rev-parse', 'HEAD^{tree}'], sb.env).trim())
      expect(verified.json.approved_tree).toBe(state.rounds[0].reviewer.tree)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'a dead model API gives reviewer_failed (exit 15) fast, the run stays in reviewing, and a retry succeeds',
    async () => {
      // codex against a port nothing listens on; claude against a mock that was started and stopped
      const deadPort = await unusedPort()
      const stopped = await startMock()
      await stopped.stop()
      const codexSb = loopSandbox(deadPort)
      const claudeSb = loopSandbox(stopped.port, { reviewer_model: CLAUDE_MODEL })

      const setUp = async (sb: ReturnType<typeof loopSandbox>, reviewer: 'codex' | 'claude') => {
        const coder = reviewer === 'claude' ? 'codex' : 'claude' // never the reviewer's own vendor (allow_same_vendor)
        const start = await sb.cli([
          'start',
          '--task',
          `dead model API (${reviewer})`,
          '--reviewer',
          reviewer,
          '--coder',
          coder,
        ])
        ok(start, 'start')
        writeFiles(sb.repo, { 'src/b.ts': 'export const b = 2\n' })
        ok(await sb.cli(['coder-done', '--summary', 'added b']), 'coder-done')
        return start.json.run_id as string
      }
      const [codexRun, claudeRun] = await Promise.all([setUp(codexSb, 'codex'), setUp(claudeSb, 'claude')])
      const [codexReview, claudeReview] = await Promise.all([
        codexSb.cli(['review', '--timeout', REVIEW_TIMEOUT]),
        claudeSb.cli(['review', '--timeout', REVIEW_TIMEOUT]),
      ])

      for (const [name, result, sb, runId] of [
        ['codex', codexReview, codexSb, codexRun],
        ['claude', claudeReview, claudeSb, claudeRun],
      ] as const) {
        expect(result.code, `${name}: ${result.stdout}\n${result.stderr}`).toBe(15)
        expect(result.json?.errors?.[0]?.code).toBe('reviewer_failed')
        expect(result.ms, `${name} took ${result.ms} ms`).toBeLessThan(FAST_FAILURE_MS)
        const state = sb.state(runId)
        expect(state.phase).toBe('reviewing')
        expect(state.rounds).toHaveLength(1)
        expect(state.rounds[0].reviewer).toBeNull()
        expect(state.failed_reviews).toHaveLength(1)
        expect(state.failed_reviews[0]).toMatchObject({ tool: name, code: 'reviewer_failed' })
        // the failed attempt's session is known though the model API never answered (claude's named before the
        // call, codex's from thread.started), so its transcript is never taken for the coder's
        expect(state.failed_reviews[0].session_id).toMatch(/^[0-9a-f-]{36}$/)
      }

      // the same review again, once the model API is back (codex pointed at the live mock): a normal round
      writeCodexConfig(codexSb.env.CODEX_HOME!, mock.port)
      mock.setScript([{ api: 'openai', label: 'after-outage' }])
      const retry = await codexSb.cli(['review', '--timeout', REVIEW_TIMEOUT])
      ok(retry, 'review retry')
      expect(retry.json).toMatchObject({ round: 1, verdict: 'APPROVED', reviewer: { tool: 'codex' } })
      expect(mock.modelCalls().filter((c) => c.label === 'after-outage')).toHaveLength(1)
      expect(codexSb.state(codexRun).phase).toBe('approved')
    },
    TEST_TIMEOUT_MS,
  )
})
