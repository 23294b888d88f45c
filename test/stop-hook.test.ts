// pair-loop stop-hook, as Claude Code and Codex call it (the hook's JSON on stdin, the hook's answer on stdout): it
// sends the agent back once, naming the next command, while the active run has work not handed over, and never when
// the agent is already continuing because of a Stop hook.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { recordReview, sandbox, tempDir } from './_helpers.ts'
import { expectOk, reviewWith } from './_expect.ts'

type Sandbox = ReturnType<typeof sandbox>

/** The hook's answer: its one JSON object (never a pair-loop document: the agents read only their own fields). */
async function hook(sb: Sandbox, input: object | string, cwd = sb.repo) {
  const result = await sb.cli(['stop-hook'], { cwd, input: typeof input === 'string' ? input : JSON.stringify(input) })
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout.endsWith('\n') && result.stdout.trim().split('\n')).toHaveLength(1)
  expect(result.json).not.toHaveProperty('version')
  return result.json as { decision?: string; reason?: string }
}

const stopping = (sb: Sandbox) => ({ cwd: sb.repo, hook_event_name: 'Stop', stop_hook_active: false })

describe('stop-hook', () => {
  it('lets the agent stop outside a repository, without a run, or on unreadable input', async () => {
    const sb = sandbox()
    expect(await hook(sb, stopping(sb))).toEqual({})
    const outside = tempDir('pl-outside-')
    expect(await hook(sb, { cwd: outside, stop_hook_active: false }, outside)).toEqual({})
    expectOk(await sb.cli(['start', '--task', 't']))
    writeFileSync(join(sb.repo, 'new.ts'), 'export {}\n')
    expect(await hook(sb, 'not json')).toEqual({}) // nothing to go by, not even stop_hook_active: never block blind
  })

  it('sends the agent back with `pair-loop coder-done` while the tree changed since the last hand-over', async () => {
    const sb = sandbox()
    expectOk(await sb.cli(['start', '--task', 't']))
    expect(await hook(sb, stopping(sb))).toEqual({}) // nothing written yet: nothing to hand over
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 1\n')
    const answer = await hook(sb, stopping(sb))
    expect(answer.decision).toBe('block')
    expect(answer.reason).toContain('pair-loop coder-done')
    expect(answer.reason).toContain('1 file(s), +1 -0')
  })

  it('never blocks twice in a row: stop_hook_active lets the agent stop', async () => {
    const sb = sandbox()
    expectOk(await sb.cli(['start', '--task', 't']))
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 1\n')
    expect(await hook(sb, { ...stopping(sb), stop_hook_active: true })).toEqual({})
  })

  it('sends the agent back with `pair-loop review` once the round is handed over, then with reply for open findings', async () => {
    const sb = sandbox()
    const runId = expectOk(await sb.cli(['start', '--task', 't'])).run_id
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 1\n')
    expectOk(await sb.cli(['coder-done', '--summary', 'x']))
    const review = await hook(sb, stopping(sb))
    expect(review).toMatchObject({ decision: 'block' })
    expect(review.reason).toContain('pair-loop review')

    await recordReview(sb.home, runId, reviewWith(1))
    const reply = await hook(sb, stopping(sb))
    expect(reply.reason).toContain('pair-loop reply --finding')
    expectOk(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'wont-fix', '--body-file', '-'], { input: 'no' }),
    )
    expect(await hook(sb, stopping(sb))).toEqual({}) // answered, and the tree is as it was handed over
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 2\nexport const y = 3\n')
    expect((await hook(sb, stopping(sb))).reason).toContain('pair-loop coder-done')
  })

  it('sends the agent back with `pair-loop review` while the review runs in its worker, to read its verdict', async () => {
    const sb = sandbox()
    const runId = expectOk(await sb.cli(['start', '--task', 't'])).run_id
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 1\n')
    expectOk(await sb.cli(['coder-done', '--summary', 'x']))
    const slow = JSON.stringify(['sh', '-c', 'cat > /dev/null; sleep 30; echo "VERDICT: APPROVED"'])
    expect(expectOk(await sb.cli(['review', '--reviewer-cmd', slow, '--wait', '0']))).toMatchObject({
      in_progress: true,
    })
    try {
      const answer = await hook(sb, stopping(sb))
      expect(answer.decision).toBe('block')
      expect(answer.reason).toContain('pair-loop review')
      expect(answer.reason).toContain('attaches')
    } finally {
      expectOk(await sb.cli(['review', '--cancel']))
    }
    expect(sb.state(runId).review_claim).toBeNull()
  })

  it('lets the agent stop once the run is approved, capped or finished', async () => {
    const sb = sandbox()
    const runId = expectOk(await sb.cli(['start', '--task', 't'])).run_id
    writeFileSync(join(sb.repo, 'new.ts'), 'export const x = 1\n')
    expectOk(await sb.cli(['coder-done', '--summary', 'x']))
    await recordReview(sb.home, runId, 'VERDICT: APPROVED')
    expect(await hook(sb, stopping(sb))).toEqual({})
    expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
    expect(await hook(sb, stopping(sb))).toEqual({})
  })
})
