// Shared by the review tests: the stub reviewers as --reviewer-cmd, a run ready for review, and "is that pid gone".
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { ROOT, sandbox } from './_helpers.ts'
import { expectOk, runInReview, type Sandbox } from './_expect.ts'

export const stubPath = (stub: string) => join(ROOT, 'fixtures', 'reviewers', `${stub}.sh`)

/** `review` with a stub reviewer as the custom command, plus any extra flags. */
export const reviewArgs = (stub: string, ...extra: string[]) => [
  'review',
  '--reviewer-cmd',
  JSON.stringify(['sh', stubPath(stub)]),
  ...extra,
]

/** A fresh sandbox whose run has its coder round 1 done (phase reviewing); `worker: 'process'` for one to kill. */
export async function sandboxInReview(
  files?: Record<string, string>,
  options: Parameters<typeof sandbox>[1] = {},
): Promise<{ sb: Sandbox; runId: string }> {
  const sb = sandbox(files, options)
  const runId = await runInReview(sb)
  return { sb, runId }
}

/** Review with the approve stub: it must succeed and approve. */
export async function approveNow(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Promise<any> {
  const doc = expectOk(await sb.cli(reviewArgs('approve'), { env }))
  expect(doc).toMatchObject({ verdict: 'APPROVED', findings: [], next: 'finish' })
  return doc
}

export const handoffText = (sb: Sandbox) => readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')

/** Dead: no such process, or a zombie waiting to be reaped (it runs nothing; reaping it is init's business). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return false
  }
}

/** Polls for `isGone` up to `graceMs`. */
export async function goneWithin(pid: number, graceMs = 2_000): Promise<boolean> {
  const until = Date.now() + graceMs
  while (!isGone(pid)) {
    if (Date.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

/** Polls `probe` every 50 ms until it returns a truthy value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The pid of a process that has already exited (and been reaped). */
export function deadPid(): number {
  const child = spawnSync('sh', ['-c', 'exit 0'])
  return child.pid!
}

/** Per-test timeout: bun ignores bunfig's `timeout` (its default is 5 s) and these tests spawn several processes each. */
export const SLOW = 30_000
