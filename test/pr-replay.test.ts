// pr-check --snapshot-in: a captured snapshot in DESIGN.md's shape replayed through the real command gives the
// documented decision for each kind of PR, as a dry run: the file is the caller's, so nothing of it is kept on the run
// (ticks in a row are played through the fake GitHub instead).
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { prSnapshotPath } from '../lib/ground/paths.ts'
import type { Snapshot } from '../lib/run/pr-schema.ts'
import { tempDir } from './_helpers.ts'
import { expectError, expectOk } from './_expect.ts'
import { at, BOT, botSummary, comment, ME, prSandbox, snapshot, thread, world } from './_pr.ts'

function snapshotFile(snap: Snapshot): string {
  const file = join(tempDir('pl-snap-'), 'snapshot.json')
  writeFileSync(file, JSON.stringify(snap, null, 2))
  return file
}

const table: Array<[string, Snapshot, 'keep_going' | 'success' | 'escalate', string, string | null]> = [
  ['green PR', snapshot(), 'success', 'ci_pass', null],
  [
    'pending CI',
    snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] }),
    'keep_going',
    'ci_pending',
    'pr-check',
  ],
  [
    'failing CI',
    snapshot({ checks: [{ name: 'ci', status: 'fail', url: null }] }),
    'keep_going',
    'ci_failed',
    'pr-check',
  ],
  [
    'unresolved bot thread',
    snapshot({ threads: [thread('PRRT_1', [comment(11, BOT, 'off by one')])] }),
    'keep_going',
    'threads_unresolved',
    'pr-check',
  ],
  [
    'stale unresolved thread',
    snapshot({ threads: [thread('PRRT_1', [comment(11, BOT, 'off by one'), comment(12, ME, 'Fixed.', 1)])] }),
    'keep_going',
    'threads_stale_unresolved',
    'pr-check',
  ],
  ['merged', snapshot({ pr: { state: 'MERGED', merged_at: at(9) } }), 'escalate', 'pr_merged', 'ask-user'],
  ['closed', snapshot({ pr: { state: 'CLOSED' } }), 'escalate', 'pr_closed', 'ask-user'],
  ['conflicting', snapshot({ pr: { mergeable: 'CONFLICTING' } }), 'escalate', 'merge_conflict', 'ask-user'],
]

/** The table as the test names it: what the PR is, and the decision. */
const cases = table.map(([name, snap, decision, code, next]) => [name, decision, code, next, snap] as const)

describe('pr-check --snapshot-in', () => {
  it.each(cases)('%s → %s, printed and not kept: the run is as it was', async (_name, decision, code, _next, snap) => {
    const sb = await prSandbox()
    const before = sb.state(sb.runId)
    const doc = expectOk(await sb.cli(['pr-check', '--snapshot-in', snapshotFile(snap)]))
    expect(doc).toMatchObject({ run_id: sb.runId, decision, changed: true, dry_run: true })
    expect(doc.reasons.map((r: { code: string }) => r.code)).toContain(code)
    expect(sb.calls()).toEqual([]) // a replay reads nothing from GitHub
    expect(sb.state(sb.runId)).toEqual(before)
    expect(existsSync(prSnapshotPath(sb.runId, sb.home))).toBe(false)
  })

  it('recurring finding after a reply → escalate (a bot summary answered with pr-reply, then the same finding again)', async () => {
    const first = snapshot({ comments: [botSummary(41, 'CHANGES_REQUESTED', ['off by one in the loop bound'])] })
    const sb = await prSandbox(world({ comments: first.comments }))
    expect(expectOk(await sb.cli(['pr-check'])).decision).toBe('keep_going')
    expectOk(
      await sb.cli(['pr-reply', '--comment', '41', '--body-file', '-'], {
        input: 'Not a bug: the bound is inclusive.',
      }),
    )
    const again = snapshot({ comments: [botSummary(42, 'CHANGES_REQUESTED', ['off by one in the loop bound'], 30)] })
    sb.change((w) => {
      w.comments = again.comments
    })
    const doc = expectOk(await sb.cli(['pr-check']))
    expect(doc).toMatchObject({ decision: 'escalate', next: 'ask-user' })
    expect(doc.reasons[0].code).toBe('recurrence_after_reply')
    expect(doc.recurrence.recurring_keys).toEqual(doc.verdict.finding_keys)
  })

  it('a second identical tick is a silent one: changed false, backoff grown', async () => {
    const sb = await prSandbox(
      world({ checks: [{ type: 'CheckRun', name: 'ci', status: 'IN_PROGRESS', conclusion: null }] }),
    )
    expectOk(await sb.cli(['pr-check']))
    const second = expectOk(await sb.cli(['pr-check']))
    expect(second).toMatchObject({ changed: false, backoff: { idle_streak: 1, wait_s: 120 } })
    expect(second.reasons.map((r: { code: string }) => r.code)).toContain('unchanged')
  })

  it('refuses a snapshot of another PR, or one not in the documented shape, as usage, recording nothing', async () => {
    const sb = await prSandbox()
    const before = sb.state(sb.runId)
    expectError(await sb.cli(['pr-check', '--snapshot-in', snapshotFile(snapshot({ pr: { number: 8 } }))]), 'usage')
    const bad = join(tempDir('pl-snap-'), 'bad.json')
    writeFileSync(bad, JSON.stringify({ version: 1, pr: { number: 7 } }))
    expect(expectError(await sb.cli(['pr-check', '--snapshot-in', bad]), 'usage').issues.length).toBeGreaterThan(0)
    expectError(await sb.cli(['pr-check', '--snapshot-in', join(sb.home, 'missing.json')]), 'usage')
    expect(sb.state(sb.runId)).toEqual(before)
    expect(existsSync(prSnapshotPath(sb.runId, sb.home))).toBe(false)
  })

  it('needs a PR on the run', async () => {
    const sb = await prSandbox()
    expectOk(await sb.cli(['start', '--task', 'second']))
    expect(expectError(await sb.cli(['pr-check']), 'usage')).toMatchObject({ next: 'finish' })
  })
})
