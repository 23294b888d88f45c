import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { renderHandoff } from '../lib/run/handoff.ts'
import { prBodyPath, runStatePath } from '../lib/ground/paths.ts'
import type { RunState } from '../lib/run/state.ts'
import { githubWithPrs, recordReview, sandbox } from './_helpers.ts'
import { expectError, expectOk, reviewWith, runDisk, runInReview, startRun, type Sandbox } from './_expect.ts'
import { claudeFolder, HAIKU, handOver, writeSession } from './cost/_spend.ts'

/** The state without what every write changes, and without `pr`: what a later `finish --pr` must leave alone. */
const withoutPr = ({ pr: _pr, revision: _revision, updated_at: _updated, ...rest }: RunState) => rest

async function approvedRun(sb: Sandbox): Promise<string> {
  const runId = await runInReview(sb)
  await recordReview(sb.home, runId, 'Looks right.\nVERDICT: APPROVED')
  return runId
}

describe('finish', () => {
  it('closes an approved run, writes the PR body and HANDOFF.md outcome', async () => {
    const sb = sandbox()
    const runId = await approvedRun(sb)
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
    expect(doc).toMatchObject({
      version: 1,
      run_id: runId,
      verdict: 'APPROVED',
      rounds: 1,
      cost_usd: 0,
      pr_body_path: prBodyPath(runId, sb.home),
      pr: null,
      pr_url: null,
    })
    const state = sb.state(runId)
    expect(state).toMatchObject({ phase: 'finished', outcome: { verdict: 'APPROVED' }, review_claim: null })
    const handoff = readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')
    expect(handoff).toBe(renderHandoff(state))
    expect(handoff).toMatch(/\n## Outcome — APPROVED · \d{4}-\d\d-\d\dT\d\d:\d\dZ\n$/)
    const body = readFileSync(doc.pr_body_path, 'utf8')
    expect(body.startsWith('## demo task\n')).toBe(true)
    expect(body).toContain(handoff)
  })

  it('abandons a run in any open phase', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    expect(expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))).toMatchObject({
      verdict: 'ABANDONED',
      rounds: 0,
    })
    expect(sb.state(runId).phase).toBe('finished')
  })

  it('ships a capped run without approval, listing the findings still open', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb, ['--max-rounds', '1'])
    await recordReview(sb.home, runId, reviewWith(2))
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED']))
    const body = readFileSync(doc.pr_body_path, 'utf8')
    expect(body).toContain('### Findings still open')
    expect(body).toContain('**1.2** [bug/minor] `src/f2.ts:2` — problem number 2')
  })

  it("writes an open finding's whole line range into the PR body", async () => {
    const sb = sandbox()
    const runId = await runInReview(sb, ['--max-rounds', '1'])
    await recordReview(sb.home, runId, '1. [bug/major] src/a.ts:3-5 — a range\nVERDICT: CHANGES_REQUESTED')
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED']))
    const body = readFileSync(doc.pr_body_path, 'utf8')
    expect(body).toContain('- **1.1** [bug/major] `src/a.ts:3-5` — a range\n')
  })

  it('writes into the PR body that the person chose to go on over the budget, at what spend and where', async () => {
    const sb = sandbox()
    const runId = await startRun(sb, ['--budget-usd', '0.5'])
    writeSession(claudeFolder(sb), 'c0000000-0000-4000-8000-0000000000b1', [{ model: HAIKU, input: 500_000 }]) // $0.50
    expectError(await handOver(sb), 'budget_exceeded')
    expectOk(await handOver(sb, ['--over-budget']))
    await recordReview(sb.home, runId, 'Looks right.\nVERDICT: APPROVED')
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
    expect(readFileSync(doc.pr_body_path, 'utf8')).toContain(
      '\n> Budget: the person chose to go on at $0.5000 of $0.5000 (coder-done, round 1).\n',
    )
  })

  describe('APPROVED before an approving review', () => {
    const cases: Array<[string, (sb: Sandbox) => Promise<string>, string, string]> = [
      ['while coding', (sb) => startRun(sb), 'coding', 'coder-done'],
      ['while reviewing', (sb) => runInReview(sb), 'reviewing', 'review'],
      [
        'after changes were requested',
        async (sb) => {
          const id = await runInReview(sb)
          await recordReview(sb.home, id, reviewWith(1))
          return id
        },
        'coding',
        'reply',
      ],
      [
        'at the round cap',
        async (sb) => {
          const id = await runInReview(sb, ['--max-rounds', '1'])
          await recordReview(sb.home, id, reviewWith(0))
          return id
        },
        'capped',
        'ask-user',
      ],
    ]
    for (const [name, setup, phase, next] of cases) {
      it(`is wrong_phase ${name}, with ${next} next, and changes nothing`, async () => {
        const sb = sandbox()
        const runId = await setup(sb)
        const before = runDisk(sb)
        const error = expectError(await sb.cli(['finish', '--verdict', 'APPROVED']), 'wrong_phase')
        expect(error).toMatchObject({ run_id: runId, phase, next, expected_phase: ['approved'] })
        expect(runDisk(sb)).toEqual(before)
        expect(existsSync(prBodyPath(runId, sb.home))).toBe(false)
      })
    }
  })

  describe('on a closed run', () => {
    it('changes only pr on a later finish --pr N, and leaves HANDOFF.md to the active run', async () => {
      const sb = sandbox()
      const runId = await approvedRun(sb)
      expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
      const handoff = readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')
      const before = sb.state(runId)
      const doc = expectOk(
        await sb.cli(['finish', '--verdict', 'APPROVED', '--pr', '42'], { env: githubWithPrs(sb.repo, [42]) }),
      )
      expect(doc).toMatchObject({ pr: 42, verdict: 'APPROVED' })
      const after = sb.state(runId)
      expect(after.pr).toBe(42)
      expect(after.revision).toBe(before.revision + 1)
      expect(withoutPr(after)).toEqual(withoutPr(before))
      expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toBe(handoff)
    })

    it('changes nothing on a replay with the same arguments', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      for (const args of [
        ['--verdict', 'ABANDONED'],
        ['--verdict', 'ABANDONED', '--pr', '7'],
      ]) {
        const first = expectOk(await sb.cli(['finish', ...args]))
        const before = runDisk(sb)
        const revision = sb.state(runId).revision
        const replay = expectOk(await sb.cli(['finish', ...args]))
        expect(replay).toEqual(first)
        expect(sb.state(runId).revision).toBe(revision)
        expect(runDisk(sb)).toEqual(before)
      }
      // without --pr, a later finish keeps the recorded number
      const before = runDisk(sb)
      expect(expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED'])).pr).toBe(7)
      expect(runDisk(sb)).toEqual(before)
    })

    it('refuses another verdict with wrong_phase naming the recorded one, and changes nothing', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
      const before = runDisk(sb)
      for (const verdict of ['APPROVED', 'CHANGES_REQUESTED']) {
        const error = expectError(await sb.cli(['finish', '--verdict', verdict, '--pr', '3']), 'wrong_phase')
        expect(error).toMatchObject({ run_id: runId, phase: 'finished', recorded_verdict: 'ABANDONED', next: null })
      }
      expect(runDisk(sb)).toEqual(before)
    })

    it('leaves the repository free for a new run, while other commands no longer find the old one', async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
      expectError(await sb.cli(['coder-done']), 'run_not_found')
      expect(expectError(await sb.cli(['coder-done', '--run', runId]), 'wrong_phase')).toMatchObject({
        phase: 'finished',
        next: null,
      })
      expect(expectOk(await sb.cli(['status']))).toMatchObject({ run_id: runId, phase: 'finished', next: null })
      const second = await startRun(sb)
      expect(second).not.toBe(runId)
    })
  })

  describe('bad input', () => {
    const sb = sandbox()
    let runId = ''
    const cases: Array<[string, RegExp, string[]]> = [
      ['no --verdict', /missing required flag --verdict/, []],
      ['an unknown verdict', /verdict.*MERGED/, ['--verdict', 'MERGED']],
      ['a lower-case verdict', /verdict.*approved/, ['--verdict', 'approved']],
      ['--pr 0', /--pr must be a whole number from 1/, ['--verdict', 'ABANDONED', '--pr', '0']],
      ['a --pr that is not a number', /--pr must be a whole number/, ['--verdict', 'ABANDONED', '--pr', '#12']],
      ['a malformed run id', /malformed run id/, ['--verdict', 'ABANDONED', '--run', '../x']],
      ['an unknown flag', /unknown flag --merge/, ['--verdict', 'ABANDONED', '--merge']],
    ]
    for (const [name, reason, args] of cases) {
      it(`refuses ${name} as usage and changes nothing`, async () => {
        runId ||= await startRun(sb)
        const before = runDisk(sb)
        expect(expectError(await sb.cli(['finish', ...args]), 'usage').message).toMatch(reason)
        expect(runDisk(sb)).toEqual(before)
        expect(sb.state(runId).phase).toBe('coding')
      })
    }
  })

  it('reports run_not_found with no run here, and for an unknown --run', async () => {
    const sb = sandbox()
    expectError(await sb.cli(['finish', '--verdict', 'ABANDONED']), 'run_not_found')
    const error = expectError(
      await sb.cli(['finish', '--verdict', 'ABANDONED', '--run', '20261130-051500-abcdef']),
      'run_not_found',
    )
    expect(error.run_id).toBe('20261130-051500-abcdef')
    expect(existsSync(runStatePath('20261130-051500-abcdef', sb.home))).toBe(false)
  })
})
