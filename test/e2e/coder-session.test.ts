// Both roles claude (issue 10, finding 6): the coder's session is never a reviewer's. A real `claude -p` in the
// repository plays the coder (its transcript lands in the repository's project folder); pair-loop's real claude
// reviewer runs under a session it names before the call (--session-id). Round 2's `coder-done` (no --session-id:
// pair-loop looks for the coder's newest transcript for the repository) records the coder's own session, never
// round 1's reviewer session nor a failed attempt's; a timed-out reviewer whose transcript holds paid-for usage adds
// nothing to `budget-check`'s coder figure, and the failed attempt's recorded session names that transcript.
// The same with a claude whose --help lacks --add-dir (an older release): pair-loop then runs the reviewer inside the
// repository, so its transcripts land in the coder's project folder, newer than the coder's.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, makeRepo, writeFiles } from '../_helpers.ts'
import {
  CLAUDE_BIN,
  CLAUDE_MODEL,
  CODEX_BIN,
  MOCK_USAGE,
  REVIEW_TIMEOUT_S,
  TEST_TIMEOUT_MS,
  claudeCost,
  findClaudeTranscript,
  parseJsonLines,
  removeLater,
  requireClis,
  runClaude,
  runPairLoop,
  tempDir,
  withReviewerVars,
  addToHomeConfig,
  type MockServer,
  useMock,
} from './_harness.ts'

const FILES = {
  'README.md': '# demo\n',
  'src/a.ts': 'export function twice(n: number): number {\n  return n + n\n}\n',
}
const ROUND1_REVIEW = 'One problem.\n\n1. [tests/minor] src/a.ts:1 — twice has no test\n\nVERDICT: CHANGES_REQUESTED'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** One mock answer at the mock's usage, at claude-sonnet-4-5's prices (transcripts-and-pricing.md §1.6). */
const ONE_CALL_USD = claudeCost(MOCK_USAGE.anthropic)

function ok(result: { code: number | null; stdout: string; stderr: string }, what: string) {
  expect(result.code, `${what} failed\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
}

/** A repository, a home pointing pair-loop at `claudeBin` for the reviewer, a run with claude in both roles. */
async function bothClaude(port: number, task: string, claudeBin = CLAUDE_BIN) {
  const repo = makeRepo(FILES)
  const env = withReviewerVars(isolatedEnv(), port) as Record<string, string>
  removeLater(dirname(repo))
  removeLater(env.HOME!)
  addToHomeConfig(env.PAIR_LOOP_HOME!, {
    allow_same_vendor: true,
    claude_bin: claudeBin,
    codex_bin: CODEX_BIN,
    reviewer_model: CLAUDE_MODEL,
  })
  const cli = (args: string[], input?: string) => runPairLoop(CLI_COMMAND, args, { cwd: repo, env, input })
  const start = await cli(['start', '--task', task, '--coder', 'claude', '--reviewer', 'claude'])
  ok(start, 'start')
  expect(start.json).toMatchObject({ coder: 'claude', reviewer: 'claude' })
  const runFile = join(env.PAIR_LOOP_HOME!, 'runs', `${start.json.run_id}.json`)
  /** Claude Code's folder for the repository (a short path: no hash). */
  const repoFolder = join(env.CLAUDE_CONFIG_DIR!, 'projects', repo.replace(/[^A-Za-z0-9]/g, '-'))
  return {
    repo,
    env,
    cli,
    repoFolder,
    state: () => JSON.parse(readFileSync(runFile, 'utf8')),
    /** Sessions whose transcripts are in the repository's folder. */
    repoSessions: () =>
      existsSync(repoFolder)
        ? readdirSync(repoFolder)
            .filter((name) => name.endsWith('.jsonl'))
            .map((name) => name.slice(0, -'.jsonl'.length))
            .sort()
        : [],
  }
}

type Sandbox = Awaited<ReturnType<typeof bothClaude>>

/** The coder: a real `claude -p` in the repository (one model call), then its change. Its session id and cost. */
async function code(sb: Sandbox, mock: MockServer) {
  mock.setScript([{ api: 'anthropic', label: 'coder', text: 'Done: twice multiplies now.' }])
  const before = mock.modelCalls().length
  const coder = await runClaude('Make twice multiply by two.', { cwd: sb.repo, env: sb.env })
  ok(coder, 'claude -p (the coder)')
  const out = JSON.parse(coder.stdout)
  expect(out.session_id).toMatch(UUID)
  expect(
    mock
      .modelCalls()
      .slice(before)
      .map((call) => call.label),
  ).toEqual(['coder'])
  expect(out.total_cost_usd).toBeCloseTo(ONE_CALL_USD, 9)
  expect(sb.repoSessions()).toEqual([out.session_id])
  writeFiles(sb.repo, { 'src/a.ts': FILES['src/a.ts'].replace('n + n', 'n * 2') })
  return { session: out.session_id as string, usd: out.total_cost_usd as number }
}

/** What the assistant entries of a Claude transcript cost at the mock's model's prices (0 when none was written). */
function transcriptUsd(path: string): number {
  const entries = parseJsonLines(readFileSync(path, 'utf8')).filter(
    (entry) => entry.type === 'assistant' && entry.message?.usage,
  )
  const byMessage = new Map(entries.map((entry) => [entry.message.id, entry.message.usage]))
  return [...byMessage.values()].reduce((sum, usage) => sum + claudeCost(usage), 0)
}

/** Every reviewer session id the run recorded: each round's reviewer, each failed attempt. */
function reviewerSessions(run: any): string[] {
  return [
    ...run.rounds.map((round: any) => round.reviewer?.session_id),
    ...run.failed_reviews.map((failed: any) => failed.session_id),
  ].filter(Boolean)
}

/** The real claude with `--add-dir` taken out of its --help, as an older release: pair-loop runs the reviewer in the repo. */
function claudeWithoutAddDir(): string {
  const bin = join(tempDir('pl-e2e-old-claude-'), 'claude')
  const real = JSON.stringify(CLAUDE_BIN)
  writeFileSync(
    bin,
    `#!/bin/sh\nif [ "$1" = "--help" ]; then ${real} --help | grep -v -e --add-dir; exit 0; fi\nexec ${real} "$@"\n`,
  )
  chmodSync(bin, 0o755)
  return bin
}

/**
 * The whole scenario: the coder's claude -p and round 1's coder-done; a review that times out after one paid call;
 * the review again (changes requested); a reply and a change; round 2's coder-done; budget-check.
 */
async function scenario(mock: MockServer, reviewerInRepo: boolean) {
  const task = `Double a number (e2e coder session, reviewer ${reviewerInRepo ? 'in' : 'outside'} the repository)`
  const sb = await bothClaude(mock.port, task, reviewerInRepo ? claudeWithoutAddDir() : CLAUDE_BIN)
  const coder = await code(sb, mock)

  const done1 = await sb.cli(['coder-done', '--summary', 'twice multiplies'])
  ok(done1, 'coder-done 1')
  expect(done1.json.session_id).toBe(coder.session)

  // a reviewer that is answered once (paid for, written to its transcript), then hangs: claude asks again for its
  // structured answer and that call never finishes; review --timeout 6 kills it (2 s was less than claude's start on a busy machine)
  mock.setScript([
    { api: 'anthropic', label: 'slow-1', text: 'Reading the diff first.', structured: false },
    { api: 'anthropic', label: 'slow-2', stall: true },
  ])
  const before = mock.modelCalls().length
  const slow = await sb.cli(['review', '--timeout', '6'])
  expect(slow.code, `${slow.stdout}\n${slow.stderr}`).toBe(16)
  expect(slow.json?.errors?.[0]?.code).toBe('reviewer_timeout')
  expect(slow.ms).toBeLessThan(15_000)
  expect(
    mock
      .modelCalls()
      .slice(before)
      .map((call) => call.label),
  ).toEqual(['slow-1', 'slow-2'])
  const failed = sb.state().failed_reviews
  expect(failed).toHaveLength(1)
  expect(failed[0]).toMatchObject({ tool: 'claude', code: 'reviewer_timeout', round: 1 })
  // the failed attempt's session names the reviewer's transcript, which holds what was paid for before the hang
  const failedSession: string = failed[0].session_id
  expect(failedSession).toMatch(UUID)
  const timedOut = findClaudeTranscript(sb.env.CLAUDE_CONFIG_DIR!, failedSession)
  expect(timedOut, `no transcript for the timed-out reviewer session ${failedSession}`).toBeDefined()
  expect(transcriptUsd(timedOut!)).toBeCloseTo(ONE_CALL_USD, 9)
  // and the attempt is priced from that transcript: a reviewer that keeps timing out still spends the budget
  expect(failed[0].cost).toMatchObject({ source: 'transcript' })
  expect(failed[0].cost.usd).toBeCloseTo(ONE_CALL_USD, 9)

  // the review again: changes requested
  mock.setScript([{ api: 'anthropic', label: 'review-1', text: ROUND1_REVIEW }])
  const review = await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)])
  ok(review, 'review 1')
  expect(review.json).toMatchObject({ round: 1, verdict: 'CHANGES_REQUESTED', reviewer: { tool: 'claude' } })
  const reviewerSession: string = sb.state().rounds[0].reviewer.session_id
  expect(reviewerSession).toMatch(UUID)
  expect(findClaudeTranscript(sb.env.CLAUDE_CONFIG_DIR!, reviewerSession)).toBeDefined()
  // the reviewer's transcripts are never in the repository's folder: it runs in its own copy of the snapshot (issue
  // 34) even without --add-dir, so only the coder's session is there (reviewerInRepo: the claude that once ran there)
  void reviewerInRepo
  expect(sb.repoSessions()).toEqual([coder.session])

  // the coder replies and changes the code (its session goes on; no new transcript), then hands over round 2
  ok(
    await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], 'Added a test.'),
    'reply',
  )
  writeFiles(sb.repo, { 'src/a.test.ts': "import { twice } from './a'\nif (twice(2) !== 4) throw new Error()\n" })
  const done2 = await sb.cli(['coder-done', '--summary', 'added a test', '--findings-addressed', '1'])
  ok(done2, 'coder-done 2')
  const run = sb.state()
  const reviewers = reviewerSessions(run)
  expect(reviewers.sort()).toEqual([failedSession, reviewerSession].sort())
  expect(reviewers).not.toContain(coder.session)

  // budget-check: the coder's figure is its own transcript's, nothing of the timed-out reviewer's (nor the other's)
  const budget = await sb.cli(['budget-check'])
  ok(budget, 'budget-check')
  expect(budget.json.by_role.coder.usd).toBeCloseTo(coder.usd, 9)
  expect(budget.json.by_role.coder.usd).toBeCloseTo(ONE_CALL_USD, 9)
  expect(budget.json.by_role.coder.tokens).toEqual({
    input: MOCK_USAGE.anthropic.input_tokens,
    output: MOCK_USAGE.anthropic.output_tokens,
    cache_write_5m: MOCK_USAGE.anthropic.cache_creation.ephemeral_5m_input_tokens,
    cache_write_1h: MOCK_USAGE.anthropic.cache_creation.ephemeral_1h_input_tokens,
    cache_read: MOCK_USAGE.anthropic.cache_read_input_tokens,
  })
  const coderSources = budget.json.sources.filter((source: any) => source.role === 'coder' && source.path)
  expect(coderSources.map((source: any) => source.session)).not.toContain(failedSession)
  expect(coderSources.map((source: any) => source.session)).not.toContain(reviewerSession)
  expect(budget.json.by_role.reviewer).toMatchObject({ calls: 2, failed_calls: 1 })

  // round 2's coder-done: the coder's own session, never a reviewer's
  expect(done2.json.session_id, "round 2's coder-done took round 1's reviewer session for the coder's").not.toBe(
    reviewerSession,
  )
  expect(done2.json.session_id, "round 2's coder-done took the timed-out reviewer's session").not.toBe(failedSession)
  expect(done2.json).toMatchObject({ round: 2, session_id: coder.session })
  expect(run.rounds.map((round: any) => round.coder.session_id)).toEqual([coder.session, coder.session])
}

describe.skipIf(!requireClis())("both roles claude: the coder's session is never a reviewer's", () => {
  const mock = useMock()

  it(
    "round 2's coder-done records the coder's session; a timed-out reviewer adds nothing to the coder's spend",
    () => scenario(mock, false),
    TEST_TIMEOUT_MS,
  )

  it(
    'the same with a claude without --add-dir, whose reviewer transcripts land in the repository folder, newest',
    () => scenario(mock, true),
    TEST_TIMEOUT_MS,
  )
})
