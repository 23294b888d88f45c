// Proves the e2e harness: the real `claude` and `codex` binaries, run offline against the mock model API with
// pair-loop's own reviewer command lines (reviewerArgv), give the shapes its reviewer dispatch parses
// (transcripts-and-pricing.md §3-4).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  CLAUDE_MODEL,
  MOCK_DEFAULT_TEXT,
  MOCK_USAGE,
  TEST_TIMEOUT_MS,
  agentDirs,
  claudeCost,
  claudeEnv,
  codexEnv,
  findClaudeTranscript,
  findCodexRollout,
  parseJsonLines,
  requireClis,
  runClaudeReviewer,
  runCodex,
  unusedPort,
  useMock,
} from './_harness.ts'

const PROMPT =
  'Review this change.\n\ndiff --git a/src/a.ts b/src/a.ts\n+export const a = 1\n\nEnd with a VERDICT line.\n'

describe.skipIf(!requireClis())('the real CLIs against the mock model API', () => {
  const mock = useMock()

  it(
    'claude -p as pair-loop runs a reviewer: the mock text, its usage, the list-price cost and a transcript',
    async () => {
      const dirs = agentDirs()
      const before = mock.modelCalls().length
      const run = await runClaudeReviewer(PROMPT, { cwd: dirs.work, env: claudeEnv(mock.port, dirs) })
      expect(run.timedOut).toBe(false)
      expect(run.code, run.stderr).toBe(0)
      const result = JSON.parse(run.stdout)
      expect(result).toMatchObject({ type: 'result', is_error: false, result: MOCK_DEFAULT_TEXT })
      const { cache_creation, ...totals } = MOCK_USAGE.anthropic
      expect(result.usage).toMatchObject(totals)
      expect(result.usage.cache_creation).toEqual(cache_creation)
      // 1234×3 + 56×15 + 489×3.75 + 300×6 + 4321×0.3 per M = 0.00947205 (0.00879705 if all 789 were 5-minute writes)
      const expected = claudeCost(MOCK_USAGE.anthropic)
      expect(expected).toBeCloseTo(0.00947205, 10)
      expect(Math.abs(result.total_cost_usd - expected)).toBeLessThan(1e-9)
      expect(Object.keys(result.modelUsage)).toEqual([CLAUDE_MODEL])

      // transcript: <CLAUDE_CONFIG_DIR>/projects/<folder>/<session_id>.jsonl, the mock's request-id as requestId
      const transcript = findClaudeTranscript(dirs.claudeConfigDir, result.session_id)
      expect(transcript, `no transcript for ${result.session_id}`).toBeDefined()
      expect(transcript).toContain(`${join('projects', '-')}`)
      const assistant = parseJsonLines(readFileSync(transcript!, 'utf8')).filter((line) => line.type === 'assistant')
      expect(assistant.length).toBe(1)
      expect(assistant[0].requestId).toMatch(/^req_mock_/)
      expect(assistant[0].message.model).toBe(CLAUDE_MODEL)
      expect(assistant[0].message.usage).toMatchObject(MOCK_USAGE.anthropic)

      // exactly one model call, authenticated with the key, streaming, the model we asked for
      const calls = mock.modelCalls().slice(before)
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({
        api: 'anthropic',
        path: '/v1/messages',
        auth: 'x-api-key',
        stream: true,
        model: CLAUDE_MODEL,
      })
      expect(JSON.stringify(mock.body(calls[0]!).messages)).toContain('export const a = 1')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'codex exec as pair-loop runs a reviewer: thread.started, the scripted agent_message, turn.completed usage and a rollout',
    async () => {
      const dirs = agentDirs()
      const text = '1. [bug/major] src/a.ts:1 — the constant is never used\nVERDICT: CHANGES_REQUESTED'
      mock.setScript([{ api: 'openai', text, label: 'codex-review' }])
      const before = mock.modelCalls().length
      const lastMessageFile = join(dirs.root, 'last-message.txt')
      const run = await runCodex(PROMPT, { cwd: dirs.work, env: codexEnv(mock.port, dirs), lastMessageFile })
      expect(run.timedOut).toBe(false)
      expect(run.code, run.stderr).toBe(0)
      const events = parseJsonLines(run.stdout)
      const started = events.find((e) => e.type === 'thread.started')
      expect(started?.thread_id).toMatch(/^[0-9a-f-]{36}$/)
      const messages = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message')
      expect(messages.at(-1)?.item.text).toBe(text)
      expect(events.some((e) => e.type === 'turn.failed' || e.type === 'error' || e.item?.type === 'error')).toBe(false)
      const completed = events.find((e) => e.type === 'turn.completed')
      expect(completed?.usage).toEqual(MOCK_USAGE.codex)
      expect(readFileSync(lastMessageFile, 'utf8')).toBe(text)
      expect(findCodexRollout(dirs.codexHome, started.thread_id)).toBeDefined()

      const calls = mock.modelCalls().slice(before)
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({
        api: 'openai',
        path: '/v1/responses',
        auth: 'bearer',
        stream: true,
        label: 'codex-review',
      })
      expect(JSON.stringify(mock.body(calls[0]!).input)).toContain('export const a = 1')
      expect(mock.script()).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'an HTTP error from the provider: claude is_error with the status, codex turn.failed',
    async () => {
      const dirs = agentDirs()
      mock.setScript([
        { api: 'anthropic', status: 400, error: 'mock rejects this request (anthropic)' },
        { api: 'openai', status: 400, error: 'mock says the request is bad' },
      ])
      const [claude, codex] = await Promise.all([
        runClaudeReviewer(PROMPT, { cwd: dirs.work, env: claudeEnv(mock.port, dirs), timeoutMs: 30_000 }),
        runCodex(PROMPT, {
          cwd: dirs.work,
          env: codexEnv(mock.port, dirs),
          lastMessageFile: join(dirs.root, 'last.txt'),
          timeoutMs: 30_000,
        }),
      ])
      expect(claude.timedOut || codex.timedOut).toBe(false)
      expect(claude.code).not.toBe(0)
      const result = JSON.parse(claude.stdout)
      expect(result).toMatchObject({ is_error: true, api_error_status: 400 })
      expect(result.result).toContain('mock rejects this request (anthropic)')
      expect(codex.code).not.toBe(0)
      const failed = parseJsonLines(codex.stdout).find((e) => e.type === 'turn.failed')
      expect(failed?.error?.message).toContain('mock says the request is bad')
      expect(mock.script()).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'mock down: claude reports is_error and codex turn.failed, each within a few seconds',
    async () => {
      const dirs = agentDirs()
      const port = await unusedPort()
      const [claude, codex] = await Promise.all([
        runClaudeReviewer(PROMPT, { cwd: dirs.work, env: claudeEnv(port, dirs), timeoutMs: 30_000 }),
        runCodex(PROMPT, {
          cwd: dirs.work,
          env: codexEnv(port, dirs),
          lastMessageFile: join(dirs.root, 'last.txt'),
          timeoutMs: 30_000,
        }),
      ])
      expect(claude.timedOut).toBe(false)
      expect(claude.code).not.toBe(0)
      expect(claude.ms).toBeLessThan(15_000)
      const result = JSON.parse(claude.stdout)
      expect(result.is_error).toBe(true)
      expect(result.result).toMatch(/Unable to connect|ConnectionRefused|connect/i)

      expect(codex.timedOut).toBe(false)
      expect(codex.code).not.toBe(0)
      expect(codex.ms).toBeLessThan(15_000)
      const events = parseJsonLines(codex.stdout)
      expect(events.some((e) => e.type === 'turn.failed')).toBe(true)
      expect(existsSync(join(dirs.root, 'last.txt')) ? readFileSync(join(dirs.root, 'last.txt'), 'utf8') : '').toBe('')
    },
    TEST_TIMEOUT_MS,
  )
})
