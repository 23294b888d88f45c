// The review outlives the coder's shell (issue 18), with the real `claude -p` as the coder: the mock model API answers
// it with Bash tool calls (`pair-loop coder-done`, then `pair-loop review` while it says `in_progress`), Claude Code's
// Bash timeout lowered to a few seconds through its environment, and the real `codex` reviewing against a mock that
// answers it several times slower than that. The review comes back `in_progress` first and with its verdict later,
// from the one reviewer request the mock saw; the ledger counts that call once. Then the same with Claude Code moving
// the foreground `review` past its timeout to a background shell that the end of the session reaps: the verdict still
// arrives, from the same single call.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, makeRepo, writeFiles } from '../_helpers.ts'
import {
  CLAUDE_BIN,
  CLAUDE_MODEL,
  CODEX_BIN,
  TEST_TIMEOUT_MS,
  removeLater,
  requireClis,
  runBinary,
  runPairLoop,
  tempDir,
  withReviewerVars,
  addToHomeConfig,
  bashCall,
  type MockRequest,
  toolResults,
  useMock,
  writePairLoopWrapper,
} from './_harness.ts'

/** Claude Code's Bash tool gives up on a command after this long (its default is 2 minutes). */
const BASH_TIMEOUT_MS = 5_000
/** The mock answers the reviewer this much later: several times the coder's shell timeout. */
const REVIEWER_DELAY_MS = 15_000
const IN_FLIGHT = '"in_progress":true'

/** A repository with a run whose coder is claude and reviewer codex, a change written, and `pair-loop` on PATH. */
async function coderSandbox(port: number, config: Record<string, unknown> = {}) {
  const repo = makeRepo({ 'README.md': '# demo\n', 'src/a.ts': 'export const twice = (n: number) => n + n\n' })
  const base = withReviewerVars(isolatedEnv(), port) as Record<string, string>
  removeLater(dirname(repo))
  removeLater(base.HOME!)
  const bin = tempDir('pl-e2e-bin-')
  writePairLoopWrapper(bin, CLI_COMMAND)
  const env: Record<string, string> = {
    ...base,
    PATH: `${bin}:${base.PATH}`,
    BASH_DEFAULT_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
    BASH_MAX_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
  }
  addToHomeConfig(env.PAIR_LOOP_HOME!, { claude_bin: CLAUDE_BIN, codex_bin: CODEX_BIN, ...config })
  const cli = (args: string[]) => runPairLoop(CLI_COMMAND, args, { cwd: repo, env })
  const started = await cli(['start', '--task', 'Double a number', '--coder', 'claude', '--reviewer', 'codex'])
  expect(started.code, started.stderr).toBe(0)
  writeFiles(repo, { 'src/a.ts': 'export const twice = (n: number) => n * 2\n' })
  const runFile = join(env.PAIR_LOOP_HOME!, 'runs', `${started.json.run_id}.json`)
  return { repo, env, cli, state: () => JSON.parse(readFileSync(runFile, 'utf8')) }
}

type Sandbox = Awaited<ReturnType<typeof coderSandbox>>

const bash = bashCall

/** The real claude -p as the coder, in the repository, allowed to run pair-loop through its Bash tool. */
function runCoder(sb: Sandbox, prompt: string) {
  return runBinary(
    CLAUDE_BIN,
    // the prompt on stdin: --allowedTools takes every argument after it
    ['-p', '--output-format', 'json', '--model', CLAUDE_MODEL, '--allowedTools', 'Bash(pair-loop:*)'],
    { cwd: sb.repo, env: sb.env, input: prompt, timeoutMs: 150_000 },
  )
}

/** The reviewer's requests (codex: the Responses API) among these calls. */
const reviewerCalls = (calls: MockRequest[]) => calls.filter((call) => call.api === 'openai')

describe.skipIf(!requireClis())("a review outlives the coder's shell (claude -p coding, codex reviewing)", () => {
  const mock = useMock()

  it(
    'comes back in_progress within the Bash timeout, then with the verdict of the one reviewer call',
    async () => {
      const sb = await coderSandbox(mock.port, { review_wait_s: 2 })
      mock.setScript([
        bash('coder-done', 'pair-loop coder-done --summary "twice multiplies"'),
        bash('review', 'pair-loop review'),
        bash('review again', 'pair-loop review', { repeat_while: IN_FLIGHT }),
        { api: 'anthropic', label: 'done', text: 'The reviewer approved.' },
        { api: 'openai', label: 'reviewer', delay: REVIEWER_DELAY_MS },
      ])
      const before = mock.modelCalls().length
      const coder = await runCoder(sb, 'Hand the change over and have it reviewed.')
      expect(coder.code, `${coder.stdout}\n${coder.stderr}`).toBe(0)
      const calls = mock.modelCalls().slice(before)
      const results = toolResults(mock, calls)
      expect(results[0], 'coder-done').toContain('"next":"review"')
      expect(results[1], 'the first review').toContain(IN_FLIGHT)
      expect(results.at(-1), 'the last review').toContain('"verdict":"APPROVED"')
      expect(reviewerCalls(calls)).toHaveLength(1)
      expect(sb.state()).toMatchObject({ phase: 'approved', review_claim: null, failed_reviews: [] })
      const budget = await sb.cli(['budget-check'])
      expect(budget.json?.by_role?.reviewer, budget.stdout).toMatchObject({ calls: 1, failed_calls: 0 })
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'gives the verdict of the same single call after Claude Code moved the foreground review to a background shell and reaped it',
    async () => {
      const sb = await coderSandbox(mock.port)
      mock.setScript([
        bash('coder-done', 'pair-loop coder-done --summary "twice multiplies"'),
        bash('review', 'pair-loop review'),
        { api: 'anthropic', label: 'done', text: 'The review is still running; ending my turn.' },
        { api: 'openai', label: 'reviewer', delay: REVIEWER_DELAY_MS },
      ])
      const before = mock.modelCalls().length
      const coder = await runCoder(sb, 'Hand the change over and have it reviewed.')
      expect(coder.code, `${coder.stdout}\n${coder.stderr}`).toBe(0)
      const results = toolResults(mock, mock.modelCalls().slice(before))
      expect(results[1], 'the review past the Bash timeout').not.toContain('"verdict"')
      expect(sb.state().phase, 'the session ended before the reviewer answered').toBe('reviewing')
      // the agent's next turn: `review` again, which attaches to the call still in flight
      const review = await sb.cli(['review'])
      expect(review.code, `${review.stdout}\n${review.stderr}`).toBe(0)
      expect(review.json).toMatchObject({ round: 1, verdict: 'APPROVED', reviewer: { tool: 'codex', calls: 1 } })
      expect(reviewerCalls(mock.modelCalls().slice(before))).toHaveLength(1)
      expect(sb.state()).toMatchObject({ phase: 'approved', failed_reviews: [] })
      const budget = await sb.cli(['budget-check'])
      expect(budget.json?.by_role?.reviewer, budget.stdout).toMatchObject({ calls: 1, failed_calls: 0 })
    },
    TEST_TIMEOUT_MS,
  )
})
