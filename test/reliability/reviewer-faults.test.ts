// Reviewer faults, from the reliability side: every fault ends in bounded time with its code, leaves no process of the
// reviewer running (checked by pid and process group), is never read as a verdict, and leaves the run consistent:
// the state unchanged but for one more failed attempt, HANDOFF.md its render, ready for the same `review` again.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ErrorCode } from '../../lib/ground/errors.ts'
import { renderHandoff } from '../../lib/run/handoff.ts'
import { runStatePath } from '../../lib/ground/paths.ts'
import type { RunState } from '../../lib/run/state.ts'
import { tempDir } from '../_helpers.ts'
import { expectError, expectOk, type Sandbox } from '../_expect.ts'
import { goneWithin, handoffText, sandboxInReview, stubPath, waitFor } from '../_review.ts'
import { liveInGroup, sleep, spawnCli } from './_util.ts'

/**
 * `review` with a stub (or an inline sh script) run through a wrapper that records the reviewer's pid first; the
 * reviewer runs in its own process group, so that pid is also the group's id.
 */
function faultArgs(script: { stub: string } | { sh: string }, pidFile: string, ...extra: string[]): string[] {
  const inner = 'stub' in script ? `exec sh "$1"` : script.sh
  const cmd = ['sh', '-c', `echo $$ > "$0"; ${inner}`, pidFile, 'stub' in script ? stubPath(script.stub) : '-']
  return ['review', '--reviewer-cmd', JSON.stringify(cmd), ...extra]
}

/** Nothing of the reviewer still runs: not the reviewer itself, nothing else in its process group. */
async function expectNoOrphans(pidFile: string, extraPids: number[] = []) {
  const pid = Number(readFileSync(pidFile, 'utf8'))
  expect(pid).toBeGreaterThan(1)
  for (const each of [pid, ...extraPids])
    expect(await goneWithin(each), `reviewer process ${each} still runs`).toBe(true)
  const until = Date.now() + 2_000
  while (liveInGroup(pid).length && Date.now() < until) await sleep(50)
  expect(liveInGroup(pid), `processes left in the reviewer's group ${pid}`).toEqual([])
}

interface Fault {
  name: string
  script: { stub: string } | { sh: string }
  env?: Record<string, string>
  extra?: string[]
  code: ErrorCode
  message: RegExp
  /** Wall-clock bound for the whole `review` process (start-up included). */
  withinMs: number
  childPidFile?: string
}

describe('reviewer faults on one run, one after another', () => {
  let sb: Sandbox
  let runId: string
  let stateDir: string
  const statePath = () => runStatePath(runId, sb.home)
  const read = (): RunState => sb.state(runId)

  beforeAll(async () => {
    ;({ sb, runId } = await sandboxInReview())
    stateDir = tempDir('pl-fault-')
  })

  const faults: Fault[] = [
    {
      name: 'hangs',
      script: { stub: 'hang' },
      extra: ['--timeout', '1'],
      code: 'reviewer_timeout',
      message: /outran its 1 s timeout/,
      withinMs: 6_000,
    },
    {
      name: 'drips a line every second and never ends',
      script: { stub: 'slow-drip' },
      extra: ['--timeout', '2'],
      code: 'reviewer_timeout',
      message: /outran its 2 s timeout/,
      withinMs: 7_000,
    },
    {
      name: 'starts a child and hangs',
      script: { stub: 'spawns-child' },
      extra: ['--timeout', '1'],
      code: 'reviewer_timeout',
      message: /timeout/,
      withinMs: 6_000,
      childPidFile: 'child.pid',
    },
    {
      name: 'is killed mid-output after printing VERDICT: APPROVED',
      script: { stub: 'crash-mid-output' },
      code: 'reviewer_failed',
      message: /killed by SIGKILL/,
      withinMs: 5_000,
    },
    {
      name: 'crashes with exit 3',
      script: { stub: 'crash' },
      code: 'reviewer_failed',
      message: /exited with status 3/,
      withinMs: 5_000,
    },
    {
      name: 'prints invalid UTF-8, NULs and control bytes',
      script: { stub: 'garbage' },
      code: 'reviewer_failed',
      message: /binary output|nothing usable/,
      withinMs: 5_000,
    },
    {
      name: 'hits its quota',
      script: { stub: 'quota' },
      code: 'reviewer_failed',
      message: /usage limit/,
      withinMs: 5_000,
    },
    {
      name: 'hits its quota but exits 0',
      script: { stub: 'quota' },
      env: { STUB_EXIT_CODE: '0' },
      code: 'reviewer_failed',
      message: /usage limit|429/,
      withinMs: 5_000,
    },
    {
      name: 'has its API key rejected',
      script: { stub: 'auth' },
      code: 'reviewer_failed',
      message: /Invalid API key|401/,
      withinMs: 5_000,
    },
    {
      name: 'has its API key rejected but exits 0',
      script: { stub: 'auth' },
      env: { STUB_EXIT_CODE: '0' },
      code: 'reviewer_failed',
      message: /Invalid API key|401/,
      withinMs: 5_000,
    },
    {
      name: 'prints VERDICT: APPROVED, leaves a background child holding its stdout and exits 1',
      script: { sh: 'cat > /dev/null; sleep 300 & echo $! > "$0.child"; echo "VERDICT: APPROVED"; exit 1' },
      code: 'reviewer_failed',
      message: /exited with status 1/,
      withinMs: 5_000,
      childPidFile: '.child',
    },
  ]

  faults.forEach((fault, index) => {
    it(`ends a reviewer that ${fault.name} with ${fault.code} in bounded time, no process left, no verdict, one more failed attempt`, async () => {
      const before = read()
      const beforeHandoff = handoffText(sb)
      const pidFile = join(stateDir, `fault-${index}.pid`)
      const started = Date.now()
      const result = await sb.cli(faultArgs(fault.script, pidFile, ...(fault.extra ?? [])), {
        env: { STUB_STATE_DIR: join(stateDir, `s${index}`), ...fault.env },
      })
      const elapsed = Date.now() - started
      const error = expectError(result, fault.code)
      expect(error.message).toMatch(fault.message)
      expect(elapsed, `review took ${elapsed} ms`).toBeLessThan(fault.withinMs)

      const childFile =
        fault.childPidFile === 'child.pid'
          ? join(stateDir, `s${index}`, 'child.pid')
          : fault.childPidFile
            ? `${pidFile}${fault.childPidFile}`
            : null
      const children = childFile ? [Number(readFileSync(childFile, 'utf8'))] : []
      await expectNoOrphans(pidFile, children)

      // no verdict, no round: the state is the one before with one more failed attempt, and nothing else
      const after = read()
      expect(after.failed_reviews).toHaveLength(before.failed_reviews.length + 1)
      expect(after.failed_reviews.at(-1)).toMatchObject({ round: 1, tool: 'custom', code: fault.code })
      expect(after.revision).toBeGreaterThan(before.revision)
      expect({ ...after, failed_reviews: before.failed_reviews, revision: 0, updated_at: '' }).toEqual({
        ...before,
        revision: 0,
        updated_at: '',
      })
      expect(after).toMatchObject({ phase: 'reviewing', review_claim: null })
      expect(after.rounds.at(-1)!.reviewer).toBeNull()
      // HANDOFF.md: its render, which a failed attempt does not change
      expect(handoffText(sb)).toBe(renderHandoff(after))
      expect(handoffText(sb)).toBe(beforeHandoff)
    }, 20_000)
  })

  it(`still reviews the run after ${faults.length} faults in a row, recording each of them once`, async () => {
    const pidFile = join(stateDir, 'approve.pid')
    const doc = expectOk(await sb.cli(faultArgs({ stub: 'approve' }, pidFile)))
    expect(doc).toMatchObject({ verdict: 'APPROVED', round: 1, findings: [] })
    await expectNoOrphans(pidFile)
    const state = sb.state(runId)
    expect(state.failed_reviews.map((f) => f.code)).toEqual(faults.map((f) => f.code))
    expect(state.phase).toBe('approved')
    expect(handoffText(sb)).toBe(renderHandoff(state))
    expect(existsSync(statePath())).toBe(true)
  }, 20_000)
})

describe('reviewer faults: pair-loop itself interrupted while the reviewer runs', () => {
  async function reviewRunning(sb: Sandbox, pidFile: string) {
    const review = spawnCli(faultArgs({ stub: 'hang' }, pidFile, '--timeout', '120'), { cwd: sb.repo, env: sb.env })
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim(), 'the reviewer to start')
    await sleep(200)
    return review
  }

  it("leaves the reviewer's whole process group running when review gets SIGTERM (only the wait ends), and review --cancel ends it whole", async () => {
    const { sb, runId } = await sandboxInReview()
    const before = sb.state(runId)
    const pidFile = join(tempDir('pl-fault-'), 'term.pid')
    const review = await reviewRunning(sb, pidFile)
    const worker = sb.state(runId).review_claim!
    expect(worker.pid).not.toBe(review.child.pid) // the call belongs to a detached worker, not to this process
    const started = Date.now()
    review.child.kill('SIGTERM')
    const result = await review.done
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(expectOk(result)).toMatchObject({ in_progress: true, wait_ended_by: 'SIGTERM', next: 'review' })
    const reviewerPid = Number(readFileSync(pidFile, 'utf8'))
    expect(liveInGroup(reviewerPid).length).toBeGreaterThan(0)
    expect(expectOk(await sb.cli(['review', '--cancel']))).toMatchObject({ cancelled: true })
    await expectNoOrphans(pidFile, [worker.pid])
    // the cancelled call is a kept attempt (it may have been paid for), never a verdict
    const after = sb.state(runId)
    expect(after).toMatchObject({ phase: 'reviewing', review_claim: null })
    expect(after.rounds).toEqual(before.rounds)
    expect(after.failed_reviews.map((f) => f.code)).toEqual(['cancelled'])
    expect(handoffText(sb)).toBe(renderHandoff(after))
    expectOk(await sb.cli(faultArgs({ stub: 'approve' }, `${pidFile}.2`)))
  }, 20_000)

  it('lets the next review take over the claim of a worker killed with SIGKILL, ending the reviewer it left running', async () => {
    const { sb, runId } = await sandboxInReview()
    const pidFile = join(tempDir('pl-fault-'), 'kill.pid')
    const review = await reviewRunning(sb, pidFile)
    const reviewerPid = Number(readFileSync(pidFile, 'utf8'))
    try {
      const claim = await waitFor(() => {
        const held = sb.state(runId).review_claim
        return held?.reviewer_pgid ? held : null
      }, "the reviewer's group on the claim")
      process.kill(claim.pid, 'SIGKILL') // the worker: SIGKILL can't be relayed, so its reviewer still runs
      review.child.kill('SIGTERM')
      await review.done
      // the waiting review may itself have found the worker dead and ended its reviewer; else the next one does
      const leftRunning = liveInGroup(claim.reviewer_pgid!).length > 0
      const next = await sb.cli(faultArgs({ stub: 'approve' }, `${pidFile}.2`))
      expect(expectOk(next)).toMatchObject({ verdict: 'APPROVED', round: 1 })
      if (leftRunning) expect(next.stderr).toContain(`process group ${claim.reviewer_pgid}`)
      const after = sb.state(runId)
      expect(after.review_claim).toBeNull()
      expect(after.failed_reviews.map((f) => f.code)).toEqual(['reviewer_failed'])
      await waitFor(() => liveInGroup(claim.reviewer_pgid!).length === 0, "the killed worker's reviewer to be ended")
    } finally {
      try {
        process.kill(-reviewerPid, 'SIGKILL')
      } catch {}
    }
  }, 20_000)
})

describe('reviewer faults: output size and bytes', () => {
  it('reads a verdict from 10 MB of output promptly, keeping state and HANDOFF.md small and the raw output whole', async () => {
    const { sb, runId } = await sandboxInReview()
    const pidFile = join(tempDir('pl-fault-'), 'huge.pid')
    const started = Date.now()
    const doc = expectOk(await sb.cli(faultArgs({ stub: 'huge' }, pidFile)))
    const elapsed = Date.now() - started
    process.stderr.write(`[reliability/reviewer-faults] 10 MiB review read in ${elapsed} ms\n`)
    expect(doc).toMatchObject({ verdict: 'APPROVED', findings: [] })
    expect(elapsed).toBeLessThan(30_000)
    await expectNoOrphans(pidFile)
    const state = sb.state(runId)
    expect(statSync(runStatePath(runId, sb.home)).size).toBeLessThan(64 * 1024)
    expect(Buffer.byteLength(handoffText(sb))).toBeLessThan(64 * 1024)
    expect(handoffText(sb)).toBe(renderHandoff(state))
    expect(state.rounds[0]!.reviewer!.summary.length).toBeLessThan(4_200)
    expect(statSync(state.rounds[0]!.reviewer!.raw_output_path!).size).toBeGreaterThan(10 * 1024 * 1024)
  }, 60_000)

  it('keeps a review with stray invalid UTF-8 bytes, with the bytes replaced and nothing but text in HANDOFF.md', async () => {
    const { sb, runId } = await sandboxInReview()
    const pidFile = join(tempDir('pl-fault-'), 'bytes.pid')
    const sh = `cat > /dev/null; printf '1. [bug/minor] src/a.ts:1 \\342\\200\\224 caf\\351 \\377\\376 broken\\n\\033[31mred\\033[0m\\nVERDICT: CHANGES_REQUESTED\\n'`
    const doc = expectOk(await sb.cli(faultArgs({ sh }, pidFile)))
    expect(doc).toMatchObject({
      verdict: 'CHANGES_REQUESTED',
      findings: [expect.objectContaining({ id: '1.1', path: 'src/a.ts' })],
    })
    await expectNoOrphans(pidFile)
    const text = handoffText(sb)
    expect(text).toBe(renderHandoff(sb.state(runId)))
    expect(text).toContain('caf\uFFFD')
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/)
  }, 20_000)
})
