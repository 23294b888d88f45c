// budget-check levels and exit 13, and the brake in coder-done (budget_exceeded unless --over-budget, recorded).
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeProjectFolder } from '../../lib/agents/locate.ts'
import { expectError, expectOk, writeChange } from '../_expect.ts'
import { ROOT, sandbox } from '../_helpers.ts'
import { claudeAssistant, writeLines } from './_gen.ts'

const SID = '12345678-0000-4000-8000-00000000abcd'

/** The coder (Claude Code) spends `dollars` in its session for this repository, now. */
function spend(sb: ReturnType<typeof sandbox>, dollars: number[], model = 'claude-haiku-4-5-20251001') {
  const path = join(sb.env.CLAUDE_CONFIG_DIR!, 'projects', claudeProjectFolder(realpathSync(sb.repo)), `${SID}.jsonl`)
  const now = Date.now()
  writeLines(
    path,
    dollars.map((d, i) =>
      claudeAssistant({
        sessionId: SID,
        ts: new Date(now + i).toISOString(),
        id: `msg_${now}_${i}`,
        requestId: `req_${now}_${i}`,
        model,
        usage: { input: Math.round(d * 1_000_000), output: 0, w5m: 0, w1h: 0, read: 0 },
      }),
    ),
    { append: true },
  )
  return path
}

describe('budget-check', () => {
  it('reports levels against the limit (none, warn from warn_ratio, alert with exit 13 and the same document)', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '1'])
    expect(start.code, start.stderr).toBe(0)
    spend(sb, [0.25, 0.25])

    const none = await sb.cli(['budget-check'])
    expect(none.code, none.stderr).toBe(0)
    expect(none.json).toMatchObject({
      version: 1,
      run_id: start.json.run_id,
      level: 'none',
      limit: 1,
      warn_at: 0.8,
      unpriced_models: [],
      complete: true,
    })
    expect(none.json.spent).toBeCloseTo(0.5, 12)
    expect(none.json.by_role.coder.usd).toBeCloseTo(0.5, 12)
    expect(none.json.by_role.reviewer.usd).toBe(0)
    expect(none.json.rounds).toEqual([expect.objectContaining({ n: 1, in_progress: true })])
    expect(none.json.sources).toEqual([
      expect.objectContaining({ role: 'coder', kind: 'claude', session: SID, status: 'read', entries: 2 }),
    ])

    spend(sb, [0.3])
    const warn = await sb.cli(['budget-check'])
    expect(warn.code).toBe(0)
    expect(warn.json.level).toBe('warn')
    expect(warn.stderr).toContain('warning')

    spend(sb, [0.2])
    const alert = await sb.cli(['budget-check'])
    expect(alert.code).toBe(13)
    expect(alert.stdout.trim().split('\n')).toHaveLength(1)
    expect(alert.json).toMatchObject({ version: 1, level: 'alert', limit: 1 })
    expect(alert.json.spent).toBeCloseTo(1, 12)
    expect(alert.json.errors).toBeUndefined()
    expect(alert.json).toMatchObject({ next: 'ask-user', ask: { reason: 'budget_exceeded' } })
    expect(alert.json.ask.choices[0]).toEqual({
      say: 'go on over the budget',
      command: 'pair-loop coder-done --over-budget',
    })

    // --limit overrides the run's budget
    const raised = await sb.cli(['budget-check', '--limit', '1.9'])
    expect(raised.code).toBe(0)
    expect(raised.json).toMatchObject({ level: 'none', limit: 1.9 })
    expect(raised.json.warn_at).toBeCloseTo(1.9 * 0.8, 12)
    expect((await sb.cli(['budget-check', '--limit', 'lots'])).json.errors[0]).toMatchObject({
      code: 'usage',
      flag: '--limit',
    })
  })

  it("warns from the config's warn_ratio as it was at the run's start; a config written later moves nothing", async () => {
    const sb = sandbox()
    mkdirSync(sb.home, { recursive: true })
    writeFileSync(join(sb.home, 'config.json'), JSON.stringify({ budget: { warn_ratio: 0.5 } }))
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '1.9'])).code).toBe(0)
    spend(sb, [1])
    writeFileSync(join(sb.home, 'config.json'), JSON.stringify({ budget: { warn_ratio: 0.9 } }))
    const doc = await sb.cli(['budget-check'])
    expect(doc.code, doc.stderr).toBe(0)
    expect(doc.json).toMatchObject({ level: 'warn', limit: 1.9, warn_at: 0.95 })
  })

  it('without a limit the level is null; an unknown model is listed and warned about', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo'])).code).toBe(0)
    spend(sb, [1], 'claude-opus-5-5')
    const doc = await sb.cli(['budget-check'])
    expect(doc.code, doc.stderr).toBe(0)
    expect(doc.json).toMatchObject({
      level: null,
      limit: null,
      warn_at: null,
      spent: 0,
      unpriced_models: ['claude-opus-5-5'],
      complete: false,
    })
    expect(doc.stderr).toContain('no price for model claude-opus-5-5')
  })
})

describe('budget-check says complete only when every figure is measured', () => {
  it('is not complete while a round has no coder response: its $0 is no measurement', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo'])).code).toBe(0)
    spend(sb, [0.25])
    writeChange(sb)
    expectOk(await sb.cli(['coder-done', '--summary', 'one']))
    // a reviewer that reports its cost (claude JSON), so the only gap is the coder's round 2
    const reviewer = ['sh', join(ROOT, 'fixtures', 'reviewers', 'claude-json.sh')]
    const changes = { env: { STUB_VERDICT: 'CHANGES_REQUESTED' } }
    expectOk(await sb.cli(['review', '--reviewer-cmd', JSON.stringify(reviewer)], changes))
    const doc = await sb.cli(['budget-check']) // round 2 is being coded, and nothing of it is in the transcript yet
    expect(doc.json.unmeasured.rounds).toContainEqual(expect.objectContaining({ n: 2, role: 'coder' }))
    expect(doc.json.complete).toBe(false)
  })
})

describe('budget-check on a finished run', () => {
  it('shows the cost afterwards, for the newest finished run by default and by --run', async () => {
    const sb = sandbox()
    const runId = (await sb.cli(['start', '--task', 'demo', '--budget-usd', '1'])).json.run_id
    spend(sb, [0.25])
    expect((await sb.cli(['finish', '--verdict', 'ABANDONED'])).code).toBe(0)
    for (const args of [['budget-check'], ['budget-check', '--run', runId]]) {
      const doc = await sb.cli(args)
      expect(doc.code, doc.stdout).toBe(0)
      expect(doc.json).toMatchObject({ run_id: runId, phase: 'finished', level: 'none', limit: 1 })
      expect(doc.json.spent).toBeCloseTo(0.25, 12)
      expect(doc.json.rounds).toEqual([expect.objectContaining({ n: 1 })])
    }
  })

  it('reports a finished run over its budget without the brake: exit 0, no person to ask', async () => {
    const sb = sandbox()
    await sb.cli(['start', '--task', 'demo', '--budget-usd', '0.1'])
    spend(sb, [0.25])
    expect((await sb.cli(['finish', '--verdict', 'ABANDONED'])).code).toBe(0)
    const doc = await sb.cli(['budget-check'])
    expect(doc.code, doc.stdout).toBe(0)
    expect(doc.json.level).toBe('alert')
    expect(doc.json.next).toBeUndefined()
  })
})

describe('the brake in coder-done', () => {
  it('refuses to open a round at or over the limit unless --over-budget, which is recorded', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '0.5'])
    const runId = start.json.run_id
    spend(sb, [0.5])
    writeChange(sb)
    const refused = await sb.cli(['coder-done', '--summary', 'did it'])
    expect(refused.code).toBe(13)
    expect(refused.json.errors[0]).toMatchObject({
      code: 'budget_exceeded',
      limit_usd: 0.5,
      level: 'alert',
      next: 'ask-user',
      ask: { reason: 'budget_exceeded' },
    })
    expect(refused.json.errors[0].ask.choices[0].command).toBe('pair-loop coder-done --over-budget')
    expect(refused.json.errors[0].spent_usd).toBeCloseTo(0.5, 12)
    expect(refused.json.errors[0].by_role.coder).toBeCloseTo(0.5, 12)
    expect(sb.state(runId)).toMatchObject({ phase: 'coding', rounds: [], budget_overrides: [] })

    const allowed = await sb.cli(['coder-done', '--summary', 'did it', '--over-budget'])
    expect(allowed.code, allowed.stderr).toBe(0)
    const state = sb.state(runId)
    expect(state.rounds[0]!.coder).toMatchObject({ over_budget: true, session_id: SID })
    expect(state.budget_overrides).toEqual([
      expect.objectContaining({ command: 'coder-done', round: 1, limit_usd: 0.5 }),
    ])
    expect(state.budget_overrides[0]!.spent_usd).toBeCloseTo(0.5, 12)

    // status shows what was spent
    const status = await sb.cli(['status'])
    expect(status.json.budget.spent_usd).toBeCloseTo(0.5, 12)
  })

  // the newcomer was asked three times for one "go on": coder-done, then budget-check and review of the same round
  it("asks once a round: coder-done's go-on covers that round's budget-check and review, and the next round asks again", async () => {
    const sb = sandbox()
    const runId = (await sb.cli(['start', '--task', 'demo', '--budget-usd', '0.5'])).json.run_id
    spend(sb, [0.5])
    writeChange(sb)
    expectOk(await sb.cli(['coder-done', '--summary', 'did it', '--over-budget']))
    const check = await sb.cli(['budget-check'])
    expect(check.code, check.stderr).toBe(0)
    expect(check.json).toMatchObject({ level: 'alert', next: 'review', over_budget_by_choice: { round: 1 } })
    expect(check.json.ask).toBeUndefined()
    const reviewed = expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
    expect(reviewed.round).toBe(1)
    expect(sb.state(runId).budget_overrides).toHaveLength(1) // one choice, recorded once: the PR body lists one
    writeChange(sb, 'b.txt')
    expectError(await sb.cli(['coder-done', '--summary', 'round two']), 'budget_exceeded')
  })

  it('--over-budget under the limit records nothing', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])
    spend(sb, [0.5])
    writeChange(sb)
    expect((await sb.cli(['coder-done', '--summary', 'x', '--over-budget'])).code).toBe(0)
    const state = sb.state(start.json.run_id)
    expect(state.budget_overrides).toEqual([])
    expect(state.rounds[0]!.coder.over_budget).toBe(false)
  })
})
