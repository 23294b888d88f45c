// The review outlives the shell that asked for it: a detached worker owns the reviewer call, `review` waits at most
// `--wait` and prints the in-flight document, a later `review` attaches (never a second call), `--cancel` ends the whole
// group, a dead worker is found by the claim's liveness check, and a silent reviewer is ended by the watchdog.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { wakeOnWrites } from '../lib/review/wait.ts'
import { lineReader } from '../lib/review/job-pipe.ts'
import { codexMeta, codexTokenCount, codexTurn, rolloutPath } from './cost/_gen.ts'
import { isBun, ROOT, sandbox, tempDir, writeTestHomeConfig } from './_helpers.ts'
import { expectError, expectOk, runInReview, type Sandbox } from './_expect.ts'
import { goneWithin, reviewArgs, sandboxInReview, SLOW, waitFor } from './_review.ts'
import { prSandbox, world } from './_pr.ts'
import { spawnCli } from './reliability/_util.ts'

/** Processes a test started that must not outlive it (workers, reviewers), killed whatever the test's end. */
const started: number[] = []
afterEach(() => {
  for (const pid of started.splice(0)) {
    for (const target of [-pid, pid])
      try {
        process.kill(target, 'SIGKILL')
      } catch {}
  }
})

/** A reviewer that takes `seconds`, appends its pid to `countFile` (one line a call), then approves. */
function slowApprove(countFile: string, seconds: number): string[] {
  const sh = `cat > /dev/null; echo $$ >> "$0"; sleep ${seconds}; echo "VERDICT: APPROVED"`
  return ['review', '--reviewer-cmd', JSON.stringify(['sh', '-c', sh, countFile])]
}

const calls = (countFile: string) =>
  existsSync(countFile) ? readFileSync(countFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []

/** The worker and the reviewer it runs, as the run's claim names them, remembered for the clean-up. */
async function inFlight(sb: Sandbox, runId: string) {
  const claim = await waitFor(() => {
    const held = sb.state(runId).review_claim
    return held?.reviewer_pgid ? held : null
  }, 'a reviewer in flight')
  started.push(claim.pid, claim.reviewer_pgid!)
  return claim
}

describe('review: the call belongs to the run, not to the shell that asked for it', () => {
  it(
    'prints the in-flight document at --wait, and a later review attaches to the same call and prints its verdict',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const count = join(tempDir('pl-count-'), 'calls')
      const before = Date.now()
      const first = expectOk(await sb.cli([...slowApprove(count, 4), '--wait', '1']))
      expect(Date.now() - before).toBeLessThan(3_500)
      expect(first).toMatchObject({ run_id: runId, round: 1, in_progress: true, wait_s: 1, next: 'review' })
      expect(Date.parse(first.started_at)).toBeGreaterThan(before - 1_000)
      expect(first.elapsed_s).toBeGreaterThanOrEqual(0)
      expect(first.output).toMatchObject({ bytes: expect.any(Number), heartbeat_at: expect.any(String) })
      expect(first.verdict).toBeUndefined()
      await inFlight(sb, runId)
      const second = expectOk(await sb.cli(['review']))
      expect(second).toMatchObject({ run_id: runId, round: 1, verdict: 'APPROVED', next: 'finish' })
      expect(calls(count)).toHaveLength(1)
      expect(sb.state(runId)).toMatchObject({ phase: 'approved', review_claim: null, failed_reviews: [] })
    },
    SLOW,
  )

  it(
    'starts one reviewer for two reviews run at once, and prints its verdict to both',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const count = join(tempDir('pl-count-'), 'calls')
      // two processes, as two shells would run them: in one process both calls would share its pid
      const [a, b] = await Promise.all([sb.cliProcess(slowApprove(count, 2)), sb.cliProcess(slowApprove(count, 2))])
      for (const result of [a, b]) expect(expectOk(result)).toMatchObject({ round: 1, verdict: 'APPROVED' })
      expect(calls(count)).toHaveLength(1)
      expect(sb.state(runId).rounds[0]!.reviewer).toMatchObject({ verdict: 'APPROVED', calls: 1 })
    },
    SLOW,
  )

  it(
    'prints a review that ended while nobody waited to the next review, once',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const count = join(tempDir('pl-count-'), 'calls')
      expect(expectOk(await sb.cli([...slowApprove(count, 1), '--wait', '0']))).toMatchObject({ in_progress: true })
      await waitFor(() => sb.state(runId).phase === 'approved', 'the worker to record the verdict')
      expect(expectOk(await sb.cli(['review']))).toMatchObject({ round: 1, verdict: 'APPROVED', next: 'finish' })
      expectError(await sb.cli(['review']), 'wrong_phase')
      expect(calls(count)).toHaveLength(1)
    },
    SLOW,
  )

  it(
    'prints the verdict a live worker recorded but has not yet left beside the run, rather than starting anew',
    async () => {
      const { sb, runId } = await sandboxInReview()
      expectOk(await sb.cli(reviewArgs('approve')))
      // the moment between the worker's record (phase approved, claim released) and its outcome file: set up by hand,
      // the worker a live process; before the wait for it, a review here started anew and said wrong_phase
      const dir = join(sb.home, 'runs', runId, 'review-worker')
      // on a loaded machine the review may have printed the run's record before its worker left the outcome
      const outcome = await waitFor(() => readIf(join(dir, 'outcome.json')), 'the worker to leave its outcome')
      const { attempt } = JSON.parse(outcome)
      rmSync(join(dir, 'outcome.json'))
      rmSync(join(dir, 'delivered'))
      const worker = spawn('sleep', ['10'], { stdio: 'ignore' })
      started.push(worker.pid!)
      const progress = { attempt, worker_pid: worker.pid, worker_pgid: null, tool: null, sessions: [], calls: 1 }
      writeFileSync(
        join(dir, 'progress.json'),
        JSON.stringify({ ...progress, output_bytes: 0, last_output_at: null, heartbeat_at: new Date().toISOString() }),
      )
      setTimeout(() => writeFileSync(join(dir, 'outcome.json'), outcome), 300)
      expect(expectOk(await sb.cli(['review']))).toMatchObject({ round: 1, verdict: 'APPROVED', next: 'finish' })
    },
    SLOW,
  )

  it(
    'keeps the reviewer running when the foreground review is killed with SIGKILL, and records its verdict',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const count = join(tempDir('pl-count-'), 'calls')
      const review = spawnCli(slowApprove(count, 2), { cwd: sb.repo, env: sb.env })
      await waitFor(() => calls(count).length === 1, 'the reviewer to start')
      review.child.kill('SIGKILL')
      await review.done
      await waitFor(() => sb.state(runId).phase === 'approved', 'the verdict', 15_000)
      expect(sb.state(runId)).toMatchObject({
        review_claim: null,
        failed_reviews: [],
        rounds: [{ reviewer: { verdict: 'APPROVED' } }],
      })
      expect(calls(count)).toHaveLength(1)
    },
    SLOW,
  )
})

describe('review: nothing is ever wedged', () => {
  it(
    'lets review start again after its worker was SIGKILLed mid-call, keeping the attempt and what its transcript cost',
    async () => {
      const { sb, runId, threadFile } = await fakeCodexInReview()
      const first = expectOk(await sb.cli(['review', '--wait', '0']))
      expect(first).toMatchObject({ in_progress: true })
      const claim = await inFlight(sb, runId)
      const thread = await waitFor(() => readIf(threadFile), 'the fake codex thread')
      // killed once the worker has read the session off codex's stdout: before that, no process knows it
      await waitFor(async () => {
        const attached = expectOk(await sb.cli(['review', '--wait', '0']))
        return attached.reviewer?.session_id === thread
      }, 'the worker to learn the session')
      process.kill(claim.pid, 'SIGKILL')
      expect(await goneWithin(claim.pid)).toBe(true)
      const again = await sb.cli(reviewArgs('approve'))
      expect(expectOk(again)).toMatchObject({ round: 1, verdict: 'APPROVED' })
      expect(again.stderr).toContain(`process group ${claim.reviewer_pgid}`)
      expect(await goneWithin(claim.reviewer_pgid!)).toBe(true)
      const [kept] = sb.state(runId).failed_reviews
      expect(kept).toMatchObject({ round: 1, tool: 'codex', code: 'reviewer_failed', session_id: thread })
      // 1000 input and 100 output tokens at the config's $1 and $10 a million
      expect(kept!.cost?.usd).toBeCloseTo(0.002, 9)
    },
    SLOW,
  )

  it(
    'has status find a dead worker and keep its attempt, so nothing says "running" for a process that is gone',
    async () => {
      const { sb, runId } = await sandboxInReview(undefined, { worker: 'process' })
      const count = join(tempDir('pl-count-'), 'calls')
      expectOk(await sb.cli([...slowApprove(count, 30), '--wait', '0']))
      const claim = await inFlight(sb, runId)
      process.kill(claim.pid, 'SIGKILL')
      expect(await goneWithin(claim.pid)).toBe(true)
      const status = expectOk(await sb.cli(['status']))
      expect(status).toMatchObject({ phase: 'reviewing', review_in_progress: false, failed_reviews: 1, next: 'review' })
      expect(sb.state(runId).failed_reviews[0]).toMatchObject({ code: 'reviewer_failed', round: 1 })
      expect(await goneWithin(claim.reviewer_pgid!)).toBe(true)
    },
    SLOW,
  )

  it(
    'ends the worker and the whole process group of its reviewer on review --cancel, keeping the attempt as cancelled',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const stateDir = tempDir('pl-stub-')
      const env = { STUB_STATE_DIR: stateDir }
      expectOk(await sb.cli(reviewArgs('spawns-child', '--wait', '0'), { env }))
      const claim = await inFlight(sb, runId)
      const child = await waitFor(() => Number(readIf(join(stateDir, 'child.pid')) ?? 0), "the reviewer's child")
      started.push(child)
      const cancelled = expectOk(await sb.cli(['review', '--cancel']))
      expect(cancelled).toMatchObject({
        run_id: runId,
        cancelled: true,
        attempt: { code: 'cancelled' },
        next: 'review',
      })
      for (const pid of [claim.pid, claim.reviewer_pgid!, child])
        expect(await goneWithin(pid), `process ${pid} still runs`).toBe(true)
      expect(sb.state(runId)).toMatchObject({
        phase: 'reviewing',
        review_claim: null,
        failed_reviews: [expect.objectContaining({ code: 'cancelled' })],
      })
      expect(expectOk(await sb.cli(reviewArgs('approve')))).toMatchObject({ verdict: 'APPROVED' })
    },
    SLOW,
  )

  it(
    'ends a reviewer that prints nothing past the no-output watchdog with reviewer_timeout, long before its timeout',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const before = Date.now()
      const result = await sb.cli(reviewArgs('hang', '--timeout', '120'), {
        env: { PAIR_LOOP_REVIEWER_SILENCE_S: '1' },
      })
      expect(Date.now() - before).toBeLessThan(15_000)
      expect(expectError(result, 'reviewer_timeout').message).toMatch(/printed nothing for 1 s/)
      expect(sb.state(runId)).toMatchObject({ phase: 'reviewing', review_claim: null })
      expect(sb.state(runId).failed_reviews.map((f) => f.code)).toEqual(['reviewer_timeout'])
    },
    SLOW,
  )
})

describe('review --pr: the final round is detached too', () => {
  it(
    'prints the final round in flight, then its verdict to the review --pr that attaches, from one call',
    async () => {
      const diff = 'diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-a\n+b\n'
      const sb = await prSandbox(world({ diff }), { pair_loop: { pr_final_round: true } })
      const count = join(tempDir('pl-count-'), 'calls')
      const first = expectOk(await sb.cli([...slowApprove(count, 2), '--pr', '--wait', '0']))
      expect(first).toMatchObject({ run_id: sb.runId, round: 'pr', in_progress: true, next: 'review' })
      started.push(first.worker.pid)
      const second = expectOk(await sb.cli(['review', '--pr']))
      expect(second).toMatchObject({ round: 'pr', pr: 7, verdict: 'APPROVED', next: 'pr-check' })
      expect(calls(count)).toHaveLength(1)
      expect(sb.state(sb.runId)).toMatchObject({ phase: 'finished', review_claim: null })
    },
    SLOW,
  )
})

describe('status --wait while a review is in flight', () => {
  it(
    'wakes when the review ends, not when its worker settles in',
    async () => {
      const { sb, runId } = await sandboxInReview()
      const count = join(tempDir('pl-count-'), 'calls')
      expectOk(await sb.cli([...slowApprove(count, 3), '--wait', '0']))
      const waited = await sb.cli(['status', '--wait', '30'])
      expect(expectOk(waited)).toMatchObject({ changed: true, phase: 'approved' })
      expect(sb.state(runId).rounds[0]!.reviewer!.verdict).toBe('APPROVED')
    },
    SLOW,
  )
})

describe('review starts its worker first, and a worker it does not need goes', () => {
  it('loads only its core chunk and the launcher before it starts the worker (the rest loads while the worker starts)', () => {
    const loaded = distFilesLoadedBy('review.cjs')
    const others = loaded.filter((path) => path !== '/dist/chunks/core.cjs' && path !== '/dist/review.cjs')
    expect(loaded).toContain('/dist/chunks/core.cjs')
    expect(others).toHaveLength(1) // a chunk of its own, hash-named: the one that starts the worker, and nothing else
    expect(readFileSync(join(ROOT, others[0]!), 'utf8')).toContain('function launchWorker')
  })

  it('is reached through a dispatcher that loads only the core chunk too', () => {
    expect(distFilesLoadedBy('pair-loop.cjs')).toEqual(['/dist/chunks/core.cjs', '/dist/pair-loop.cjs'])
  })

  it(
    'leaves no worker running and no worker log behind when the review is refused',
    async () => {
      const sb = sandbox()
      expectOk(await sb.cli(['start', '--task', 'a review asked for too early']))
      expectError(await sb.cli(reviewArgs('approve')), 'wrong_phase')
      await waitFor(() => workersOf(sb.home!).length === 0, 'the worker not needed to exit')
      expect(listed(join(sb.home!, 'review-workers'))).toEqual([])
    },
    SLOW,
  )

  it('exits and removes the log it started with when its review sent no job (killed before the claim)', () => {
    const home = tempDir('pl-home-')
    const attempt = '3f2a1c4e-0000-4000-8000-00000000dead'
    const log = join(home, 'review-workers', `${attempt}.log`)
    mkdirSync(dirname(log), { recursive: true })
    writeFileSync(log, '')
    const script = isBun ? join(ROOT, 'scripts', 'review.ts') : join(ROOT, 'dist', 'review.cjs')
    const worker = spawnSync(process.execPath, [script, '--worker', attempt], {
      env: { ...process.env, PAIR_LOOP_HOME: home },
      input: '', // the pipe closed with nothing on it
      timeout: 20_000,
    })
    expect(worker.status, String(worker.stderr)).toBe(0)
    expect(existsSync(log)).toBe(false)
  })

  it('takes each line of its stdin up at its newline, while the pipe is still open', async () => {
    const run = '{"announce":"run","run_id":"20261202-000000-abcdef"}'
    const job = '{"run_id":"20261202-000000-abcdef","attempt":"a1","note":"é"}'
    const bytes = Buffer.from(`${run}\n${job}\n`)
    const cut = bytes.indexOf(0xa9) // inside the two bytes of é: a line may come in pieces
    const stillOpen = (async function* () {
      yield bytes.subarray(0, cut)
      yield bytes.subarray(cut)
      await new Promise(() => {}) // its review has not closed the pipe yet
    })()
    const lines = lineReader(stillOpen)
    expect(await lines.next()).toBe(run)
    expect(await lines.next()).toBe(job)
  })

  it('wakes the wait the moment the outcome is renamed into place, long before its next poll', async () => {
    const dir = tempDir('pl-attempt-')
    const changes = wakeOnWrites(dir, new Set(['outcome.json']))
    try {
      expect(changes.watching).toBe(true)
      const before = Date.now()
      const woken = changes.next(20_000)
      writeFileSync(join(dir, 'outcome.json.tmp'), '{}')
      renameSync(join(dir, 'outcome.json.tmp'), join(dir, 'outcome.json'))
      await woken
      expect(Date.now() - before).toBeLessThan(5_000)
    } finally {
      changes.close()
    }
  })
})

/** The files of dist/ that loading the built `script` loads (a script run by name is not loaded as main: nothing runs). */
function distFilesLoadedBy(script: string): string[] {
  const probe = `require(${JSON.stringify(join(ROOT, 'dist', script))}); console.log(JSON.stringify(Object.keys(require.cache)))`
  // node, whatever runs the tests: dist/ is the build Node runs (Bun and Deno run the sources)
  const loaded: string[] = JSON.parse(spawnSync('node', ['-e', probe], { encoding: 'utf8' }).stdout)
  return loaded
    .filter((path) => path.startsWith(join(ROOT, 'dist')))
    .map((path) => path.slice(ROOT.length))
    .sort()
}

/** Review workers running for `home` (their command line says --worker, their environment this PAIR_LOOP_HOME). */
function workersOf(home: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
        return argv.includes('--worker') && env.includes(`PAIR_LOOP_HOME=${home}`)
      } catch {
        return false // gone meanwhile
      }
    })
    .map(Number)
}

const listed = (dir: string) => (existsSync(dir) ? readdirSync(dir) : [])

// ---------------------------------------------------------------- a fake codex whose rollout shows what it spent

/**
 * A sandbox in review whose reviewer is a fake `codex`: it prints `thread.started`, writes a rollout of 1000 input
 * and 100 output tokens under CODEX_HOME (the model priced at $1 and $10 a million in the home config), then hangs.
 */
async function fakeCodexInReview() {
  const dir = tempDir('pl-codex-')
  const thread = '01a2b3c4-0000-7000-8000-00000000c0de'
  const at = '2026-12-01T10:00:00.000Z'
  const rollout = [
    codexMeta(thread, at),
    codexTurn('fake-codex-model', at),
    codexTokenCount(at, { input: 1000, cached: 0, output: 100, reasoning: 0 }),
  ]
  writeFileSync(join(dir, 'rollout.jsonl'), `${rollout.map((line) => JSON.stringify(line)).join('\n')}\n`)
  const bin = join(dir, 'codex')
  writeFileSync(
    bin,
    `#!/usr/bin/env node
const fs = require('fs')
const path = require('path')
if (process.argv.includes('--help')) process.exit(0)
fs.readFileSync(0)
const rollout = path.join(process.env.CODEX_HOME, ${JSON.stringify(rolloutPath('', thread, '2026/12/01'))})
fs.mkdirSync(path.dirname(rollout), { recursive: true })
fs.copyFileSync(${JSON.stringify(join(dir, 'rollout.jsonl'))}, rollout)
process.stdout.write(JSON.stringify({ type: 'thread.started', thread_id: ${JSON.stringify(thread)} }) + '\\n')
fs.writeFileSync(${JSON.stringify(join(dir, 'thread'))}, ${JSON.stringify(thread)})
setInterval(() => {}, 1000)
`,
  )
  chmodSync(bin, 0o755)
  const sb = sandbox(undefined, { worker: 'process' }) // its worker is killed: a real process
  // the person's config records the fake as their codex (start records it; PATH no longer chooses the reviewer)
  writeTestHomeConfig(sb.home, {
    pair_loop: { codex_bin: bin },
    pricing: { 'fake-codex-model': { input: 1, output: 10, cache_read: 0.1 } },
  })
  const runId = await runInReview(sb)
  return { sb, runId, threadFile: join(dir, 'thread') }
}

function readIf(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}
