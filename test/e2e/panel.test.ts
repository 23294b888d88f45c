// A panel of the real claude and codex on the mock model API (issue 35, item 3): under `approval: all` one approving
// and one asking for changes leaves the round unapproved, then both approving approves it; each member's cost is its
// own, equal to its CLI's own figure (claude's total_cost_usd) or its tokens at the table's prices (codex).
import { readFileSync } from 'node:fs'
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
  addToHomeConfig,
  claudeCost,
  codexCost,
  removeLater,
  requireClis,
  runPairLoop,
  useMock,
  withReviewerVars,
} from './_harness.ts'

const FILES = { 'README.md': '# demo\n', 'src/a.ts': 'export const a = 1\n' }
const CHANGES = '1. [bug/major] src/a.ts:1 — PANEL-FINDING-5c1a: a must be 3\n\nVERDICT: CHANGES_REQUESTED'
const APPROVE = 'Looks right.\n\nVERDICT: APPROVED'

function panelSandbox(port: number) {
  const repo = makeRepo(FILES)
  const env = withReviewerVars(isolatedEnv(), port)
  removeLater(dirname(repo))
  removeLater(env.HOME)
  addToHomeConfig(env.PAIR_LOOP_HOME, {
    claude_bin: CLAUDE_BIN,
    codex_bin: CODEX_BIN,
    reviewer_model: CLAUDE_MODEL,
    reviewers: ['claude', 'codex'],
    approval: 'all',
  })
  const cli = (args: string[], input?: string) => runPairLoop(CLI_COMMAND, args, { cwd: repo, env, input })
  const state = (runId: string) => JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'runs', `${runId}.json`), 'utf8'))
  return { repo, env, cli, state }
}

const ok = (result: { code: number | null; stdout: string; stderr: string }, what: string) =>
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)

describe.skipIf(!requireClis())('a panel of the real claude and codex', () => {
  const mock = useMock()

  it(
    'under all: one asking for changes keeps the round from approval, then both approving approves it',
    async () => {
      const sb = panelSandbox(mock.port)
      const start = await sb.cli([
        'start',
        '--task',
        'Make a 3 (e2e panel)',
        '--reviewer',
        'claude',
        '--coder',
        'gemini',
      ])
      ok(start, 'start')
      const runId: string = start.json.run_id
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 2\n' })
      ok(await sb.cli(['coder-done', '--summary', 'a is 2']), 'coder-done 1')

      mock.setScript([
        { api: 'anthropic', text: APPROVE, label: 'claude-1' },
        { api: 'openai', text: CHANGES, label: 'codex-1', structured: false },
      ])
      const review1 = await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)])
      ok(review1, 'review 1')
      expect(review1.json).toMatchObject({
        verdict: 'CHANGES_REQUESTED',
        approval: 'all',
        panel: [
          { tool: 'claude', verdict: 'APPROVED' },
          { tool: 'codex', verdict: 'CHANGES_REQUESTED' },
        ],
      })
      expect(review1.json.findings).toMatchObject([{ id: '1.1', raised_by: ['codex'] }])
      expect(sb.state(runId).phase).toBe('coding')

      // each member's cost: claude's is its own total_cost_usd (and the formula's), codex's its tokens × the table
      const [claude, codex] = sb.state(runId).rounds[0].reviewer.panel
      expect(claude.cost.usd).toBeCloseTo(claude.cost.reported_usd, 9)
      expect(claude.cost.usd).toBeCloseTo(claudeCost(MOCK_USAGE.anthropic), 8)
      expect(codex.cost.usd).toBeCloseTo(codexCost(MOCK_USAGE.codex), 9)
      const budget = await sb.cli(['budget-check'])
      ok(budget, 'budget-check')
      expect(budget.json.by_role.reviewer).toMatchObject({ calls: 2, failed_calls: 0 })
      expect(budget.json.by_role.reviewer.usd).toBeCloseTo(claude.cost.usd + codex.cost.usd, 9)

      ok(await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], 'a is 3'), 'reply')
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 3\n' })
      ok(await sb.cli(['coder-done', '--summary', 'a is 3']), 'coder-done 2')
      mock.setScript([
        { api: 'anthropic', text: APPROVE, label: 'claude-2' },
        { api: 'openai', text: APPROVE, label: 'codex-2', structured: false },
      ])
      const review2 = await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)])
      ok(review2, 'review 2')
      expect(review2.json).toMatchObject({
        verdict: 'APPROVED',
        panel: [
          { tool: 'claude', verdict: 'APPROVED' },
          { tool: 'codex', verdict: 'APPROVED' },
        ],
      })
      expect(sb.state(runId).phase).toBe('approved')
    },
    TEST_TIMEOUT_MS,
  )
})
