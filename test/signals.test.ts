import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runStatePath, runsDir } from '../lib/ground/paths.ts'
import { reviewWith, runInReview, startRun } from './_expect.ts'
import { CLI_COMMAND, recordReview, sandbox, tempDir } from './_helpers.ts'
import { waitFor } from './_review.ts'

// A person's Ctrl-C (SIGINT) or a supervisor's SIGTERM: every command still prints its one document, `interrupted`
// with exit 130, so a cron or bounded-wait loop reading stdout never gets empty input. `review` is the exception that
// proves it: a signal ends only its wait (the in-flight document, exit 0); the reviewer call goes on and is recorded.

type Sb = ReturnType<typeof sandbox>

interface Interrupted {
  code: number | null
  json: any
  stderr: string
  ms: number
}

/** Run a command, send `signal` once it is waiting (after `afterMs`), and collect what it printed. */
function interrupt(sb: Sb, args: string[], signal: NodeJS.Signals, afterMs: number): Promise<Interrupted> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], {
      cwd: sb.repo,
      env: sb.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    child.stdin.end()
    let sentAt = 0
    const timer = setTimeout(() => {
      sentAt = Date.now()
      child.kill(signal)
    }, afterMs)
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      clearTimeout(guard)
      const stdout = Buffer.concat(out).toString('utf8')
      let json: any
      try {
        json = JSON.parse(stdout)
      } catch {}
      resolve({ code, json, stderr: Buffer.concat(err).toString('utf8'), ms: sentAt ? Date.now() - sentAt : -1 })
    })
  })
}

/** Hold a lock directory as proper-lockfile makes it, fresh, so a command waits on it. */
const holdLock = (path: string) => mkdirSync(`${path}.lock`, { recursive: true })

const setups: Array<[string, (sb: Sb) => Promise<string[]>]> = [
  [
    'status --wait',
    async (sb) => {
      await startRun(sb)
      return ['status', '--wait', '60']
    },
  ],
  ['status --all --wait', async () => ['status', '--all', '--wait', '60']],
  [
    'start waiting on the lock',
    async (sb) => {
      const { createHash } = await import('node:crypto')
      mkdirSync(runsDir(sb.home), { recursive: true })
      holdLock(join(runsDir(sb.home), `.start-${createHash('sha256').update(sb.repo).digest('hex').slice(0, 16)}`))
      return ['start', '--task', 'x']
    },
  ],
  [
    'coder-done waiting on the lock',
    async (sb) => {
      holdLock(runStatePath(await startRun(sb), sb.home))
      return ['coder-done', '--summary', 's']
    },
  ],
  [
    'reply waiting on the lock',
    async (sb) => {
      const runId = await runInReview(sb)
      await recordReview(sb.home, runId, reviewWith(1))
      holdLock(runStatePath(runId, sb.home))
      return ['reply', '--finding', '1.1', '--disposition', 'ack', '--body-file', '/etc/hostname']
    },
  ],
  [
    'finish waiting on the lock',
    async (sb) => {
      holdLock(runStatePath(await startRun(sb), sb.home))
      return ['finish', '--verdict', 'ABANDONED']
    },
  ],
]

describe('a signal', () => {
  for (const [name, setup] of setups) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      it(`stops ${name} on ${signal} with one interrupted document and exit 130`, async () => {
        const sb = sandbox()
        const args = await setup(sb)
        const result = await interrupt(sb, args, signal, 1_500)
        expect(result.code, result.stderr).toBe(130)
        expect(result.json?.errors?.[0]).toMatchObject({ code: 'interrupted', signal, retryable: true })
        expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1)
        // a wait ends on the signal itself, well inside the 4 s grace after which a command is cut
        expect(result.ms).toBeLessThan(2_500)
      })
    }
  }
})

describe('a signal to review', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`ends only its wait on ${signal}: the in-flight document, exit 0, and the reviewer goes on to its verdict`, async () => {
      const sb = sandbox()
      const runId = await runInReview(sb)
      const calls = join(tempDir('pl-calls-'), 'calls')
      const reviewer = ['sh', '-c', 'cat > /dev/null; echo $$ >> "$0"; sleep 3; echo "VERDICT: APPROVED"', calls]
      const result = await interrupt(sb, ['review', '--reviewer-cmd', JSON.stringify(reviewer)], signal, 1_500)
      expect(result.code, result.stderr).toBe(0)
      expect(result.json).toMatchObject({ in_progress: true, wait_ended_by: signal, next: 'review' })
      expect(result.ms).toBeLessThan(3_000)
      await waitFor(() => sb.state(runId).phase === 'approved', 'the verdict of the call that went on', 15_000)
      expect(sb.state(runId)).toMatchObject({ review_claim: null, failed_reviews: [] })
      expect(existsSync(calls) && readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(1)
    }, 30_000)
  }
})
