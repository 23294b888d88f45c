// The reviewer process is bounded whatever it does: output past its cap is a failure, never read for a verdict;
// a review settles within its timeout plus a short grace even when a descendant left the process group (setsid)
// and keeps the reviewer's stdout open; a reviewer that answers and exits is not held up by such a descendant.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ErrorCode } from '../lib/ground/errors.ts'
import { judgeFailure } from '../lib/review/failure.ts'
import { parseReviewerOutput } from '../lib/review/output.ts'
import type { RunResult } from '../lib/review/process.ts'
import { runCli, tempDir } from './_helpers.ts'
import { expectError, expectOk, type Sandbox } from './_expect.ts'
import { goneWithin, handoffText, sandboxInReview, stubPath, waitFor } from './_review.ts'

/** How long pair-loop reads a reviewer's output after the reviewer exits, and waits after a kill (lib/review/process.ts). */
const GRACE_S = 2
/** Start-up of the CLI, git and the stub on a busy machine. */
const SLACK_S = 4

/** Process groups a test started (the reviewer's, the stub's detached sleeper's): killed after each test, whatever happened. */
let groups: number[] = []
let pidFiles: string[] = []

afterEach(() => {
  for (const file of pidFiles) if (existsSync(file)) groups.push(Number(readFileSync(file, 'utf8')))
  for (const group of groups) {
    try {
      if (group > 1) process.kill(-group, 'SIGKILL')
    } catch {}
  }
  groups = []
  pidFiles = []
})

/**
 * `review` with a stub (or an inline sh script) run through a wrapper that first writes the reviewer's pid, which is
 * also its process group's id, to `<dir>/reviewer.pid`; a detached sleeper's pid is in `<dir>/detached.pid`. Both
 * groups are killed after the test. The CLI itself is killed after `killAfterMs`, so a review that never settles
 * fails the test instead of hanging it.
 */
async function review(sb: Sandbox, script: { stub: string } | { sh: string }, options: Options = {}) {
  const { dir, pidFile, args } = reviewCommand(script, options.extra)
  const started = Date.now()
  const result = await runCli(args, {
    cwd: sb.repo,
    env: { ...sb.env, STUB_STATE_DIR: dir, ...options.env },
    timeoutMs: options.killAfterMs ?? 30_000,
  })
  const elapsedMs = Date.now() - started
  process.stderr.write(`[reviewer-process] ${options.label ?? 'review'}: ${elapsedMs} ms\n`)
  return { result, elapsedMs, dir, reviewerPid: Number(readFileSync(pidFile, 'utf8')) }
}

function reviewCommand(script: { stub: string } | { sh: string }, extra: string[] = []) {
  const dir = tempDir('pl-proc-')
  const pidFile = join(dir, 'reviewer.pid')
  pidFiles.push(pidFile, join(dir, 'detached.pid'))
  const inner = 'stub' in script ? 'exec sh "$1"' : script.sh
  const cmd = ['sh', '-c', `echo $$ > "$0"; ${inner}`, pidFile, 'stub' in script ? stubPath(script.stub) : '-']
  return { dir, pidFile, args: ['review', '--reviewer-cmd', JSON.stringify(cmd), ...extra] }
}

interface Options {
  extra?: string[]
  env?: Record<string, string>
  killAfterMs?: number
  label?: string
}

/** A failed review is never a verdict: still reviewing, no round recorded, no claim, the attempt kept once. */
function expectFailureKept(sb: Sandbox, runId: string, code: ErrorCode, message: RegExp) {
  const state = sb.state(runId)
  expect(state).toMatchObject({ phase: 'reviewing', review_claim: null })
  expect(state.rounds).toHaveLength(1)
  expect(state.rounds[0]!.reviewer).toBeNull()
  expect(state.failed_reviews).toEqual([
    expect.objectContaining({ round: 1, tool: 'custom', code, message: expect.stringMatching(message) }),
  ])
  expect(handoffText(sb)).not.toContain('REVIEWER')
}

/**
 * The stub's setsid'ed sleeper was still alive, outside the reviewer's process group, when the review returned: the
 * review settled although something still held the reviewer's stdout (the sleeper is killed after the test).
 */
function expectDetachedSleeperAlive(dir: string, reviewerPid: number) {
  const pid = Number(readFileSync(join(dir, 'detached.pid'), 'utf8'))
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  expect(state, `detached sleeper ${pid}`).not.toBe('Z')
  expect(Number(pgrp)).not.toBe(reviewerPid)
}

const MiB = 1024 * 1024
const SLOW = 60_000

describe('review: a verdict is only ever read from complete output', () => {
  const cap = MiB
  const floods: Array<{ name: string; script: { stub: string } | { sh: string }; env?: Record<string, string> }> = [
    {
      name: 'prints VERDICT: APPROVED, more than the cap of prose, then VERDICT: CHANGES_REQUESTED',
      script: { stub: 'approve-then-huge' },
      env: { STUB_HUGE_BYTES: String(3 * cap) },
    },
    {
      name: 'prints VERDICT: APPROVED, then floods its stdout without end',
      script: { sh: 'cat > /dev/null; echo "VERDICT: APPROVED"; yes "VERDICT: APPROVED"' },
    },
  ]
  for (const flood of floods) {
    it(
      `gives reviewer_failed (output too large) and records no round when the reviewer ${flood.name}`,
      async () => {
        const { sb, runId } = await sandboxInReview()
        const { result, reviewerPid } = await review(sb, flood.script, {
          env: { PAIR_LOOP_REVIEWER_MAX_OUTPUT_BYTES: String(cap), ...flood.env },
          extra: ['--timeout', '40'],
          label: `output past a ${cap}-byte cap`,
        })
        const error = expectError(result, 'reviewer_failed')
        expect(error.message).toMatch(/output.*too large|more than .* bytes/i)
        expect(error).toMatchObject({
          run_id: runId,
          round: 1,
          phase: 'reviewing',
          next: 'review',
          retryable: true,
          reason: 'output_too_large',
        })
        expectFailureKept(sb, runId, 'reviewer_failed', /too large|more than/)
        expect(await goneWithin(reviewerPid), `reviewer ${reviewerPid} still runs`).toBe(true)
      },
      SLOW,
    )
  }

  it(
    'still reads a verdict from output just under the cap',
    async () => {
      const { sb } = await sandboxInReview()
      const env = { PAIR_LOOP_REVIEWER_MAX_OUTPUT_BYTES: String(2 * MiB), STUB_HUGE_BYTES: String(MiB) }
      const { result } = await review(sb, { stub: 'huge' }, { env })
      expect(expectOk(result)).toMatchObject({ verdict: 'APPROVED', round: 1 })
    },
    SLOW,
  )
})

describe('judgeFailure: output cut at its cap is output_too_large, whatever else is true of it', () => {
  const cut: Array<[string, Partial<RunResult>, string]> = [
    ['ends in a verdict line and exited 0', {}, 'VERDICT: APPROVED\n'],
    ['also outran its timeout', { timedOut: true }, 'VERDICT: APPROVED\n'],
    ['was killed when it passed the cap', { exitCode: null, signal: 'SIGTERM' }, 'VERDICT: CHANGES_REQUESTED\n'],
    ['is Claude JSON cut in the middle', {}, '{"type":"result","result":"VERDICT: APPROVED'],
  ]
  for (const [name, overrides, stdout] of cut) {
    it(`gives reviewer_failed with reason output_too_large when the cut output ${name}`, () => {
      const result: RunResult = {
        exitCode: 0,
        signal: null,
        stdout: Buffer.from(stdout),
        stderr: Buffer.alloc(0),
        timedOut: false,
        durationMs: 1,
        truncated: true,
        maxOutputBytes: 64 * MiB,
        ...overrides,
      }
      expect(judgeFailure('custom', result, parseReviewerOutput(stdout), 1_000)).toEqual({
        code: 'reviewer_failed',
        message: expect.stringMatching(/output was too large: more than 64 MiB.*not read for a verdict/),
        details: { reason: 'output_too_large' },
      })
    })
  }
})

describe('review: bounded in time however the reviewer’s descendants behave', () => {
  it(
    'gives reviewer_timeout within timeout + grace when a setsid’ed grandchild keeps the reviewer’s stdout open',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const timeoutS = 2
      const label = `--timeout ${timeoutS}, a detached grandchild holding stdout`
      const run = await review(sb, { stub: 'detached-child-hang' }, { extra: ['--timeout', String(timeoutS)], label })
      expect(expectError(run.result, 'reviewer_timeout').message).toMatch(/outran its 2 s timeout/)
      expectDetachedSleeperAlive(run.dir, run.reviewerPid)
      expect(run.elapsedMs, `review took ${run.elapsedMs} ms`).toBeLessThanOrEqual(
        (timeoutS + GRACE_S + SLACK_S) * 1000,
      )
      expectFailureKept(sb, runId, 'reviewer_timeout', /timeout/)
      expect(await goneWithin(run.reviewerPid), `reviewer ${run.reviewerPid} still runs`).toBe(true)
    },
    SLOW,
  )

  it(
    'records the verdict promptly when the reviewer answers and exits, leaving a setsid’ed grandchild holding its stdout',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const label = 'answered and exited, a detached grandchild holding stdout'
      const run = await review(sb, { stub: 'approve-leaves-detached-child' }, { label })
      expect(expectOk(run.result)).toMatchObject({ verdict: 'APPROVED', round: 1, next: 'finish' })
      expectDetachedSleeperAlive(run.dir, run.reviewerPid)
      expect(run.elapsedMs, `review took ${run.elapsedMs} ms`).toBeLessThanOrEqual((GRACE_S + SLACK_S) * 1000)
      expect(sb.state(runId)).toMatchObject({ phase: 'approved', review_claim: null, failed_reviews: [] })
    },
    SLOW,
  )
})

describe('review: cancelled by the person while a setsid’ed grandchild holds the reviewer’s stdout', () => {
  it(
    'settles within the kill grace after review --cancel, keeping the attempt as cancelled',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const { dir, pidFile, args } = reviewCommand({ stub: 'detached-child-hang' }, ['--timeout', '120', '--wait', '0'])
      const env = { ...sb.env, STUB_STATE_DIR: dir }
      expectOk(await runCli(args, { cwd: sb.repo, env }))
      const worker = await waitFor(() => sb.state(runId).review_claim, 'the review worker')
      groups.push(worker.pid)
      await waitFor(() => existsSync(join(dir, 'detached.pid')), 'the detached grandchild to start')
      const started = Date.now()
      const cancelled = await runCli(['review', '--cancel'], { cwd: sb.repo, env })
      const elapsedMs = Date.now() - started
      process.stderr.write(`[reviewer-process] cancel with a detached grandchild holding stdout: ${elapsedMs} ms\n`)
      expect(elapsedMs, `the cancel took ${elapsedMs} ms`).toBeLessThanOrEqual((GRACE_S + SLACK_S) * 1000)
      expect(expectOk(cancelled)).toMatchObject({ cancelled: true, attempt: { code: 'cancelled' } })
      expectDetachedSleeperAlive(dir, Number(readFileSync(pidFile, 'utf8')))
      expect(sb.state(runId)).toMatchObject({ phase: 'reviewing', review_claim: null })
      expect(sb.state(runId).failed_reviews).toEqual([expect.objectContaining({ round: 1, code: 'cancelled' })])
      const reviewerPid = Number(readFileSync(pidFile, 'utf8'))
      expect(await goneWithin(reviewerPid), `reviewer ${reviewerPid} still runs`).toBe(true)
      expect(await goneWithin(worker.pid), `worker ${worker.pid} still runs`).toBe(true)
    },
    SLOW,
  )
})
