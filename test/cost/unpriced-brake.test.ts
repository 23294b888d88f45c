// With a limit in force, usage on a model no price covers makes the brake refuse (issue 17, item 19): spend that
// cannot be measured is not under the limit. `budget_exceeded` names the models; `--over-budget` or a price in config
// lets the round open. claude-opus-5-5 is not in the table (transcripts-and-pricing.md §5).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { assessBudget } from '../../lib/cost/brake.ts'
import type { ReviewerRound } from '../../lib/run/state.ts'
import { sandbox, tempDir } from '../_helpers.ts'
import { coderRound, makeRun } from './_gen.ts'
import { claudeFolder, handOver, UNPRICED, writeSession } from './_spend.ts'

const SID = 'd0000000-0000-4000-8000-000000000001'

describe('unpriced usage under a limit', () => {
  it('budget-check is at alert (exit 13), naming the model, though the figure is $0', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])).code).toBe(0)
    writeSession(claudeFolder(sb), SID, [{ model: UNPRICED, output: 10_000_000 }])
    const check = await sb.cli(['budget-check'])
    expect(check.code).toBe(13)
    expect(check.json).toMatchObject({ level: 'alert', spent: 0, unpriced_models: [UNPRICED], complete: false })
    expect(check.stderr).toContain(`budget_exceeded: run ${check.json.run_id} used ${UNPRICED}, which no price covers`)
  })

  it('coder-done refuses with budget_exceeded naming the model; --over-budget opens the round and is recorded', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])
    writeSession(claudeFolder(sb), SID, [{ model: UNPRICED, output: 10_000_000 }])
    const refused = await handOver(sb)
    expect(refused.code).toBe(13)
    expect(refused.json.errors[0]).toMatchObject({
      code: 'budget_exceeded',
      level: 'alert',
      unpriced_usage: [UNPRICED],
      next: 'ask-user',
    })
    expect(refused.json.errors[0].message).toContain(UNPRICED)

    const allowed = await handOver(sb, ['--over-budget'])
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(sb.state(start.json.run_id).budget_overrides).toEqual([
      expect.objectContaining({ command: 'coder-done', spent_usd: 0, limit_usd: 5 }),
    ])
  })

  it('a price in config measures it: 10,000 output tokens at $25 a million are $0.25, under the limit', async () => {
    const sb = sandbox()
    mkdirSync(sb.home, { recursive: true })
    writeFileSync(join(sb.home, 'config.json'), JSON.stringify({ pricing: { [UNPRICED]: { input: 5, output: 25 } } }))
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])).code).toBe(0)
    writeSession(claudeFolder(sb), SID, [{ model: UNPRICED, output: 10_000 }])
    const check = await sb.cli(['budget-check'])
    expect(check.code, check.stderr).toBe(0)
    expect(check.json).toMatchObject({ level: 'none', unpriced_models: [] })
    expect(check.json.spent).toBeCloseTo(0.25, 12)
  })

  it('a reviewer call the CLI priced itself is measured: its model missing from the table does not stop the brake', () => {
    const root = tempDir('pl-unpriced-')
    const review: ReviewerRound = {
      tool: 'claude',
      fallback_used: false,
      verdict: 'CHANGES_REQUESTED',
      findings: [],
      summary: '',
      session_id: null,
      model: UNPRICED,
      usage: null,
      cost: {
        usd: 0.5,
        source: 'reported',
        models: { [UNPRICED]: 0 },
        unpriced_models: [UNPRICED],
        transcript_usd: null,
        reported_usd: 0.5,
      },
      calls: 1,
      duration_ms: 1,
      raw_output_path: null,
      over_budget: false,
      at: '2026-01-05T03:00:00.000Z',
    }
    const run = makeRun({
      repo: join(root, 'repo'),
      created_at: '2026-01-05T01:00:00.000Z',
      phase: 'coding',
      budget_usd: 5,
      rounds: [{ ...coderRound(1, null, '2026-01-05T02:00:00.000Z'), reviewer: review }],
    })
    const env = { CLAUDE_CONFIG_DIR: join(root, 'claude'), PAIR_LOOP_HOME: join(root, 'pl'), HOME: root }
    const budget = assessBudget(run, { budget: { per_run_usd: null, warn_ratio: 0.8 }, pricing: {} }, { env })
    expect(budget.level).toBe('none')
    expect(budget.ledger.unpriced_models).toEqual([UNPRICED])
    expect(budget.ledger.unpriced_usage).toEqual([])
  })
})
