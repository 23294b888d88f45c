// APPROVED ships what the approving review saw, byte for byte: a tree that moved on since is handed over and reviewed
// again, and the Stop hook says so (lib/review/changes.ts fingerprints the change at each hand-over and review).
import { utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { git, recordReview, sandbox } from './_helpers.ts'
import { expectError, expectOk, runDisk, type Sandbox } from './_expect.ts'
import { approveNow, SLOW } from './_review.ts'

const write = (sb: Sandbox, text: string) => writeFileSync(join(sb.repo, 'app.ts'), text)
const stopping = (sb: Sandbox) => JSON.stringify({ cwd: sb.repo, hook_event_name: 'Stop', stop_hook_active: false })
const hook = async (sb: Sandbox) => (await sb.cli(['stop-hook'], { input: stopping(sb) })).json

/** A run whose change (app.ts) is handed over in round one. */
async function handedOver(): Promise<{ sb: Sandbox; runId: string }> {
  const sb = sandbox()
  const { run_id } = expectOk(await sb.cli(['start', '--task', 'demo task']))
  write(sb, 'export const limit = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  return { sb, runId: run_id }
}

/** A run whose change a real review (the approve stub) approved. */
async function approved(): Promise<Sandbox> {
  const { sb } = await handedOver()
  await approveNow(sb)
  return sb
}

describe('an approved run', () => {
  it(
    'refuses finish --verdict APPROVED as wrong_phase after a same-size edit, naming coder-done, and changes nothing',
    async () => {
      const sb = await approved()
      write(sb, 'export const limit = 9\n') // the same counts: one file, one line added
      const before = runDisk(sb)
      const error = expectError(await sb.cli(['finish', '--verdict', 'APPROVED']), 'wrong_phase')
      expect(error).toMatchObject({ changed_since_review: true, next: 'coder-done', phase: 'approved' })
      expect(error.message).toContain('pair-loop coder-done')
      expect(runDisk(sb)).toEqual(before)
    },
    SLOW,
  )

  it(
    'hands the change over again from approved, and finishes once a review approved it',
    async () => {
      const sb = await approved()
      write(sb, 'export const limit = 9\n')
      expect(expectOk(await sb.cli(['coder-done', '--summary', 'after approval'])).round).toBe(2)
      await approveNow(sb)
      expect(expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))).toMatchObject({ rounds: 2 })
    },
    SLOW,
  )

  it(
    'refuses coder-done as wrong_phase, finish next, while the tree is as approved',
    async () => {
      const sb = await approved()
      const error = expectError(await sb.cli(['coder-done', '--summary', 'nothing new']), 'wrong_phase')
      expect(error).toMatchObject({ phase: 'approved', next: 'finish' })
    },
    SLOW,
  )

  it(
    'finishes when the approved change was only committed, or its files only touched',
    async () => {
      const sb = await approved()
      utimesSync(join(sb.repo, 'app.ts'), new Date(), new Date(Date.now() + 5000))
      git(sb.repo, ['add', 'app.ts'], sb.env)
      git(sb.repo, ['commit', '-qm', 'the approved change'], sb.env)
      expect(expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))).toMatchObject({ verdict: 'APPROVED' })
    },
    SLOW,
  )

  it(
    'refuses finish --verdict APPROVED when the approving review recorded no snapshot (a run from before snapshots): nobody can name what it saw',
    async () => {
      const { sb, runId } = await handedOver()
      await recordReview(sb.home, runId, 'VERDICT: APPROVED', 'codex', null)
      expect(expectError(await sb.cli(['finish', '--verdict', 'APPROVED']), 'wrong_phase')).toMatchObject({
        changed_since_review: true,
        next: 'coder-done',
      })
    },
    SLOW,
  )
})

describe('the Stop hook', () => {
  it(
    'sends the agent back after an edit made since the approving review, and lets it stop while the tree is as approved',
    async () => {
      const sb = await approved()
      expect(await hook(sb)).toEqual({})
      write(sb, 'export const limit = 9\n')
      const answer = await hook(sb)
      expect(answer.decision).toBe('block')
      expect(answer.reason).toContain('since the approving review')
      expect(answer.reason).toContain('pair-loop coder-done')
    },
    SLOW,
  )

  it(
    'sends the agent back after a same-size edit since the last hand-over',
    async () => {
      const { sb, runId } = await handedOver()
      await recordReview(sb.home, runId, 'VERDICT: CHANGES_REQUESTED')
      expect(await hook(sb)).toEqual({})
      write(sb, 'export const limit = 9\n') // the counts are those handed over: one file, one line added
      expect((await hook(sb)).reason).toContain('since the last `coder-done`')
    },
    SLOW,
  )
})
