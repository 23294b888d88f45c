import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { changeRun } from '../lib/run/run-access.ts'
import { runStatePath } from '../lib/ground/paths.ts'
import { recordReview, sandbox, tempDir } from './_helpers.ts'
import {
  expectError,
  expectOk,
  reviewWith,
  runDisk,
  runInReview,
  startRun,
  type Sandbox,
  writeChange,
} from './_expect.ts'

/** Keep changing a run from this process (not the one waiting) until `done` settles. */
async function keepChanging(sb: Sandbox, runId: string, done: Promise<unknown>): Promise<number> {
  let settled = false
  void done.finally(() => {
    settled = true
  })
  let changes = 0
  while (!settled) {
    await changeRun(
      runId,
      (state) => ({ state: { ...state, task: `changed ${++changes}` }, result: undefined }),
      sb.home,
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return changes
}

describe('status', () => {
  it("shows a new run's phase, round, next step and paths", async () => {
    const sb = sandbox()
    const runId = await startRun(sb, ['--budget-usd', '3'])
    const doc = expectOk(await sb.cli(['status']))
    expect(doc).toMatchObject({
      run_id: runId,
      phase: 'coding',
      round: 1,
      rounds_left: 3,
      max_rounds: 3,
      next: 'coder-done',
      task: 'demo task',
      repo: sb.repo,
      branch: 'main',
      coder: 'claude',
      reviewer: 'codex',
      open_findings: [],
      replies: 0,
      review_in_progress: false,
      budget: { limit_usd: 3, spent_usd: 0 },
      outcome: null,
      pr: null,
      revision: 1,
      state_path: runStatePath(runId, sb.home),
      handoff_path: join(sb.repo, 'HANDOFF.md'),
    })
  })

  it('follows the loop: review next, then the open findings with reply next', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    expect(expectOk(await sb.cli(['status']))).toMatchObject({
      phase: 'reviewing',
      round: 1,
      next: 'review',
      rounds_left: 2,
    })
    await recordReview(sb.home, runId, reviewWith(2))
    const doc = expectOk(await sb.cli(['status']))
    expect(doc).toMatchObject({ phase: 'coding', round: 2, next: 'reply' })
    expect(doc.open_findings).toEqual([
      {
        id: '1.1',
        category: 'bug',
        severity: 'minor',
        path: 'src/f1.ts',
        line: 1,
        line_end: 1,
        text: 'problem number 1',
        recurring: false,
        recurring_of: null,
      },
      {
        id: '1.2',
        category: 'bug',
        severity: 'minor',
        path: 'src/f2.ts',
        line: 2,
        line_end: 2,
        text: 'problem number 2',
        recurring: false,
        recurring_of: null,
      },
    ])
  })

  it('changes nothing on disk', async () => {
    const sb = sandbox()
    await runInReview(sb)
    const before = runDisk(sb)
    expectOk(await sb.cli(['status']))
    expectOk(await sb.cli(['status', '--all']))
    expect(runDisk(sb)).toEqual(before)
  })

  describe('which run it means', () => {
    it('finds the active run from a subdirectory of the repository', async () => {
      const sb = sandbox({ 'src/deep/x.ts': 'x\n' })
      const runId = await startRun(sb)
      expect(expectOk(await sb.cli(['status'], { cwd: join(sb.repo, 'src', 'deep') })).run_id).toBe(runId)
      expect(expectOk(await sb.cli(['status', '--cwd', join(sb.repo, 'src')], { cwd: tempDir() })).run_id).toBe(runId)
    })

    it('keeps two active runs in different repositories apart', async () => {
      const sb = sandbox()
      const other = sandbox()
      const first = await startRun(sb)
      const second = expectOk(await sb.cli(['start', '--task', 'other'], { cwd: other.repo })).run_id
      writeChange(other)
      expect(expectOk(await sb.cli(['status'])).run_id).toBe(first)
      expect(expectOk(await sb.cli(['status'], { cwd: other.repo })).run_id).toBe(second)
      // and the commands that change a run change the one here
      expectOk(await sb.cli(['coder-done'], { cwd: other.repo }))
      expect(expectOk(await sb.cli(['status'])).phase).toBe('coding')
      expect(expectOk(await sb.cli(['status'], { cwd: other.repo })).phase).toBe('reviewing')
    })

    it('refuses to guess between several active runs in one repository (usage, with their ids)', async () => {
      const sb = sandbox()
      const first = await startRun(sb)
      const second = '20261130-051500-00aa00'
      const copy = JSON.parse(readFileSync(runStatePath(first, sb.home), 'utf8'))
      writeFileSync(runStatePath(second, sb.home), JSON.stringify({ ...copy, run_id: second }))
      const error = expectError(await sb.cli(['status']), 'usage')
      expect([...error.run_ids].sort()).toEqual([first, second].sort())
      expect(expectOk(await sb.cli(['status', '--run', second])).run_id).toBe(second)
    })

    it('reports run_not_found when there is no run here, or outside any repository', async () => {
      const sb = sandbox()
      expect(expectError(await sb.cli(['status']), 'run_not_found').repo).toBe(sb.repo)
      const outside = tempDir('pl-outside-')
      expect(expectError(await sb.cli(['status'], { cwd: outside }), 'run_not_found').cwd).toBe(outside)
    })

    it('does not take an active run of another repository for this one', async () => {
      const sb = sandbox()
      await startRun(sb)
      const other = sandbox()
      expectError(await sb.cli(['status'], { cwd: other.repo }), 'run_not_found')
    })

    it('reports run_not_found for an unknown --run and usage for a malformed one', async () => {
      const sb = sandbox()
      await startRun(sb)
      expect(expectError(await sb.cli(['status', '--run', '20261130-051500-abcdef']), 'run_not_found').run_id).toBe(
        '20261130-051500-abcdef',
      )
      expect(expectError(await sb.cli(['status', '--run', '../x']), 'usage').run_id).toBe('../x')
    })
  })

  it('lists every run with --all, readable or not', async () => {
    const sb = sandbox()
    const other = sandbox()
    const first = await startRun(sb)
    const second = expectOk(await sb.cli(['start', '--task', 'other'], { cwd: other.repo })).run_id
    expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
    writeFileSync(runStatePath('20261130-000000-dead00', sb.home), '{"version":')
    const doc = expectOk(await sb.cli(['status', '--all'], { cwd: tempDir() }))
    const byId = Object.fromEntries(doc.runs.map((run: { run_id: string }) => [run.run_id, run]))
    expect(Object.keys(byId).sort()).toEqual([first, second].sort())
    expect(byId[first]).toMatchObject({ phase: 'finished', outcome: 'ABANDONED', next: null, repo: sb.repo })
    expect(byId[second]).toMatchObject({ phase: 'coding', next: 'coder-done', repo: other.repo, open_findings: 0 })
    expect(doc.unreadable).toEqual([
      { run_id: '20261130-000000-dead00', code: 'state_malformed', message: expect.any(String) },
    ])
  })

  describe('--wait', () => {
    it('returns changed: true as soon as another process changes the run', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      const startedAt = Date.now()
      const waiting = sb.cli(['status', '--wait', '30'])
      const changes = await keepChanging(sb, runId, waiting)
      const doc = expectOk(await waiting)
      expect(changes).toBeGreaterThan(0)
      expect(doc).toMatchObject({ run_id: runId, changed: true })
      expect(doc.revision).toBeGreaterThan(1)
      expect(doc.task).toMatch(/^changed \d+$/)
      expect(Date.now() - startedAt).toBeLessThan(20_000)
    })

    it('returns changed: false when nothing changes before the timeout', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      const startedAt = Date.now()
      const doc = expectOk(await sb.cli(['status', '--wait', '1']))
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_000)
      expect(doc).toMatchObject({ run_id: runId, changed: false, revision: 1 })
    })

    it('with --all, returns changed: true when any run changes', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      const waiting = sb.cli(['status', '--all', '--wait', '30'], { cwd: tempDir() })
      await keepChanging(sb, runId, waiting)
      const doc = expectOk(await waiting)
      expect(doc.changed).toBe(true)
      expect(doc.runs[0].revision).toBeGreaterThan(1)
    })

    it('refuses a wait that is not a whole number of seconds as usage', async () => {
      const sb = sandbox()
      await startRun(sb)
      for (const wait of ['soon', '-1', '1.5', '86401']) expectError(await sb.cli(['status', '--wait', wait]), 'usage')
    })
  })

  describe('a state file truncated to half', () => {
    const commands: Array<[string, string[], string | undefined]> = [
      ['status', ['status'], undefined],
      ['status --wait', ['status', '--wait', '1'], undefined],
      ['coder-done', ['coder-done', '--summary', 'x'], undefined],
      ['reply', ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], 'answer'],
      ['finish', ['finish', '--verdict', 'ABANDONED', '--pr', '3'], undefined],
    ]
    for (const [name, args, input] of commands) {
      it(`makes ${name} fail with state_malformed (exit 3) and stays byte-identical`, async () => {
        const sb = sandbox()
        const runId = await runInReview(sb)
        await recordReview(sb.home, runId, reviewWith(1))
        const path = runStatePath(runId, sb.home)
        const text = readFileSync(path)
        writeFileSync(path, text.subarray(0, Math.floor(text.length / 2)))
        const before = runDisk(sb)
        const error = expectError(await sb.cli([...args, '--run', runId], { input }), 'state_malformed')
        expect(error.path).toBe(path)
        expect(runDisk(sb)).toEqual(before)
      })
    }

    it('is listed as unreadable by status --all and left as it is', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      const path = runStatePath(runId, sb.home)
      const text = readFileSync(path)
      writeFileSync(path, text.subarray(0, Math.floor(text.length / 2)))
      mkdirSync(join(sb.home, 'spare'), { recursive: true })
      copyFileSync(path, join(sb.home, 'spare', 'copy'))
      const doc = expectOk(await sb.cli(['status', '--all']))
      expect(doc.unreadable.map((u: { run_id: string }) => u.run_id)).toEqual([runId])
      expect(readFileSync(path)).toEqual(readFileSync(join(sb.home, 'spare', 'copy')))
    })
  })
})

describe('status cost', () => {
  it("follows the coder's transcript as it grows, though it reuses the last figures while nothing changed", async () => {
    const { claudeAssistant, writeLines } = await import('./cost/_gen.ts')
    const { claudeProjectDir } = await import('../lib/agents/locate.ts')
    const sb = sandbox()
    const runId = (await sb.cli(['start', '--task', 'cost'])).json.run_id as string
    const sid = 'c0000000-0000-4000-8000-000000000001'
    const transcript = join(claudeProjectDir(sb.repo, sb.env), `${sid}.jsonl`)
    const usage = { input: 1000, output: 1000, w5m: 0, w1h: 0, read: 0 }
    const line = (n: number) =>
      claudeAssistant({
        sessionId: sid,
        ts: new Date(Date.now() + n).toISOString(),
        id: `msg_${n}`,
        requestId: `req_${n}`,
        model: 'claude-sonnet-4-5-20250929',
        usage,
      })
    writeLines(transcript, [line(1)])
    const first = (await sb.cli(['status'])).json.budget.spent_usd
    expect(first).toBeCloseTo((1000 * 3 + 1000 * 15) / 1e6, 12)
    expect((await sb.cli(['status'])).json.budget.spent_usd).toBe(first)
    writeLines(transcript, [line(2)], { append: true })
    expect((await sb.cli(['status'])).json.budget.spent_usd).toBeCloseTo(2 * first, 12)
    expect(runId).toMatch(/^\d{8}-/)
  })
})
