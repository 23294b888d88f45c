import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ErrorCode } from '../lib/ground/errors.ts'
import { CLI_COMMAND, tempDir } from './_helpers.ts'
import { expectError, expectOk, runDisk, type Sandbox } from './_expect.ts'
import { approveNow, goneWithin, handoffText, reviewArgs, sandboxInReview, SLOW, waitFor } from './_review.ts'

/** A failed review changed nothing but the failed-attempt log: still reviewing, no round, no claim, and it can be run again. */
async function expectFailureKept(sb: Sandbox, runId: string, code: ErrorCode | 'cancelled', message: RegExp) {
  const state = sb.state(runId)
  expect(state.phase).toBe('reviewing')
  expect(state.rounds).toHaveLength(1)
  expect(state.rounds[0]!.reviewer).toBeNull()
  expect(state.review_claim).toBeNull()
  expect(state.failed_reviews).toEqual([
    expect.objectContaining({ round: 1, tool: 'custom', code, message: expect.stringMatching(message) }),
  ])
  expect(handoffText(sb)).not.toContain('REVIEWER')
  const again = await approveNow(sb)
  expect(again.round).toBe(1)
  expect(sb.state(runId)).toMatchObject({
    phase: 'approved',
    review_claim: null,
    failed_reviews: [expect.objectContaining({ code })],
  })
}

describe('review: a reviewer that fails is never a verdict', () => {
  const failures: Array<[string, string, Record<string, string>, ErrorCode, RegExp]> = [
    [
      'crashes with a message on stderr',
      'crash',
      {},
      'reviewer_failed',
      /exited with status 3.*lost connection to the model server \(simulated crash\)/,
    ],
    [
      'is killed mid-output after printing VERDICT: APPROVED',
      'crash-mid-output',
      {},
      'reviewer_failed',
      /killed by SIGKILL/,
    ],
    ['prints bytes that are not text', 'garbage', {}, 'reviewer_failed', /binary output|nothing usable/],
    ['prints nothing', 'empty', {}, 'reviewer_failed', /printed nothing usable/],
    ['hits its usage limit (exit 1)', 'quota', {}, 'reviewer_failed', /usage limit/],
    ['hits its usage limit but exits 0', 'quota', { STUB_EXIT_CODE: '0' }, 'reviewer_failed', /usage limit|429/],
    ['has its API key rejected (exit 1)', 'auth', {}, 'reviewer_failed', /Invalid API key|401/],
    ['has its API key rejected but exits 0', 'auth', { STUB_EXIT_CODE: '0' }, 'reviewer_failed', /Invalid API key|401/],
    ['reports is_error in Claude JSON', 'claude-json-error', {}, 'reviewer_failed', /API Error: 529.*Overloaded/],
    ['stops at its --max-budget-usd cap', 'claude-json-budget', {}, 'reviewer_failed', /Reached maximum budget/],
    [
      'reports turn.failed in Codex JSON lines',
      'codex-jsonl-failed',
      {},
      'reviewer_failed',
      /unexpected status 400 Bad Request/,
    ],
  ]
  for (const [name, stub, env, code, message] of failures) {
    it(
      `gives ${code} when the reviewer ${name}, and the run stays reviewing`,
      async () => {
        const { sb, runId } = await sandboxInReview()
        const result = await sb.cli(reviewArgs(stub), { env })
        expect(result.code).toBe(15)
        const error = expectError(result, code)
        expect(error.message).toMatch(message)
        expect(error).toMatchObject({
          run_id: runId,
          round: 1,
          tool: 'custom',
          phase: 'reviewing',
          next: 'review',
          // honest: a rejected key, or the run's money spent to the cap, is not fixed by running the same review again
          retryable: stub !== 'auth' && stub !== 'claude-json-budget',
        })
        await expectFailureKept(sb, runId, code, message)
      },
      SLOW,
    )
  }

  const timeouts: Array<[string, string]> = [
    ['hangs', 'hang'],
    ['prints a line every second and never finishes', 'slow-drip'],
  ]
  for (const [name, stub] of timeouts) {
    it(
      `gives reviewer_timeout within a few seconds when the reviewer ${name}`,
      async () => {
        const { sb, runId } = await sandboxInReview()
        const started = Date.now()
        const result = await sb.cli(reviewArgs(stub, '--timeout', '1'))
        expect(Date.now() - started).toBeLessThan(6_000)
        expect(result.code).toBe(16)
        const error = expectError(result, 'reviewer_timeout')
        expect(error.message).toMatch(/outran its 1 s timeout/)
        await expectFailureKept(sb, runId, 'reviewer_timeout', /timeout/)
      },
      SLOW,
    )
  }

  it(
    'kills the whole process group on a timeout, so a child the reviewer started does not outlive it',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      expectError(
        await sb.cli(reviewArgs('spawns-child', '--timeout', '1'), { env: { STUB_STATE_DIR: stateDir } }),
        'reviewer_timeout',
      )
      const childPid = Number(readFileSync(join(stateDir, 'child.pid'), 'utf8'))
      expect(childPid).toBeGreaterThan(1)
      expect(await goneWithin(childPid), `the reviewer's child ${childPid} is still running`).toBe(true)
      await expectFailureKept(sb, runId, 'reviewer_timeout', /timeout/)
    },
    SLOW,
  )

  it(
    'shows a heartbeat on stderr while it waits for the reviewer',
    async () => {
      const { sb } = await sandboxInReview()
      const result = await sb.cli(reviewArgs('hang', '--timeout', '1'), { env: { PAIR_LOOP_HEARTBEAT_S: '0.25' } })
      expect(result.code).toBe(16)
      expect(result.json.errors[0].code).toBe('reviewer_timeout')
      expect(result.stderr).toMatch(/waiting for the custom reviewer: \d+ s, \d+ bytes so far/)
    },
    SLOW,
  )

  it(
    'gives reviewer_unavailable (not retryable), not a failed review, when the reviewer command does not exist',
    async () => {
      const { sb } = await sandboxInReview()
      const missing = join(tempDir('pl-none-'), 'no-such-reviewer')
      const before = runDisk(sb)
      const result = await sb.cli(['review', '--reviewer-cmd', JSON.stringify([missing])])
      expect(result.code).toBe(14)
      expect(expectError(result, 'reviewer_unavailable')).toMatchObject({ retryable: false, command: [missing] })
      expect(runDisk(sb)).toEqual(before)
    },
    SLOW,
  )

  it(
    'leaves the reviewer and its children running when review itself is terminated, and review --cancel ends them all',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      const [command, ...prefix] = CLI_COMMAND
      const child = spawn(command!, [...prefix, ...reviewArgs('spawns-child', '--timeout', '30')], {
        cwd: sb.repo,
        env: { ...sb.env, STUB_STATE_DIR: stateDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const out: Buffer[] = []
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
      const childPid = await waitFor(
        () => (existsSync(join(stateDir, 'child.pid')) ? Number(readFileSync(join(stateDir, 'child.pid'), 'utf8')) : 0),
        "the reviewer's child",
      )
      const started = Date.now()
      child.kill('SIGTERM')
      // the signal ends only the wait: the in-flight document, exit 0; the paid call goes on
      expect(await closed).toBe(0)
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(JSON.parse(Buffer.concat(out).toString('utf8'))).toMatchObject({ in_progress: true, next: 'review' })
      expect(await goneWithin(childPid, 500), `the reviewer's child ${childPid} was ended`).toBe(false)
      const claim = sb.state(runId).review_claim!
      expect(claim.reviewer_pgid).toBeGreaterThan(1)
      expect(expectOk(await sb.cli(['review', '--cancel']))).toMatchObject({ cancelled: true })
      for (const pid of [childPid, claim.reviewer_pgid!, claim.pid])
        expect(await goneWithin(pid), `process ${pid} is still running`).toBe(true)
      await expectFailureKept(sb, runId, 'cancelled', /cancelled/)
    },
    SLOW,
  )

  it(
    'keeps the cost of a failed call that reported one',
    async () => {
      const { sb, runId } = await sandboxInReview()
      expectError(await sb.cli(reviewArgs('claude-json-error')), 'reviewer_failed')
      const [failed] = sb.state(runId).failed_reviews
      expect(failed!.cost?.reported_usd).toBeCloseTo(0.0021, 6)
      expect(failed!.cost?.usd).toBeGreaterThan(0)
      expect(failed!.session_id).toBe('6b1d2c3e-0000-4000-8000-0000000000e1')
    },
    SLOW,
  )

  it(
    "saves the failed reviewer's raw output beside the state and names it in the error",
    async () => {
      const { sb, runId } = await sandboxInReview()
      const error = expectError(await sb.cli(reviewArgs('crash')), 'reviewer_failed')
      expect(error.raw_output_path).toContain(join(sb.home, 'runs', runId))
      expect(existsSync(error.raw_output_path)).toBe(true)
      expect(readFileSync(error.raw_output_path, 'utf8')).toContain('1. [bug/major] src/a.ts:3-5 — the loop bound is')
      expect(sb.state(runId).failed_reviews[0]!.raw_output_path).toBe(error.raw_output_path)
    },
    SLOW,
  )

  it(
    'names the person as the next step after the second failure in a row, and status says the same',
    async () => {
      const { sb } = await sandboxInReview()
      expect(expectError(await sb.cli(reviewArgs('crash')), 'reviewer_failed').next).toBe('review')
      const second = expectError(await sb.cli(reviewArgs('crash')), 'reviewer_failed')
      expect(second).toMatchObject({ next: 'ask-user', ask: { reason: 'reviewer_failed_twice' } })
      expect(second.ask.choices.map((choice: { command: string }) => choice.command)).toContain('pair-loop review')
      expect(expectOk(await sb.cli(['status']))).toMatchObject({ next: 'ask-user', ask: second.ask })
    },
    SLOW,
  )
})
