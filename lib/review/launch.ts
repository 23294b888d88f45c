// Starting the detached worker that owns a reviewer call. It gets a session and process group of its own (setsid), and
// it is not a child of this `review`: a shell in between starts it in the background and exits at once, so neither a
// signal to this process, nor a kill of its process tree (a coder's shell tool at its timeout), nor the end of the
// agent's turn reaches it. `review` starts it first, before loading the code that finds the run and makes the checks,
// so the worker's own start-up (a runtime and pair-loop's code, again) runs meanwhile; once `review` has claimed the
// run in its name, the run and the job come on its stdin. Its stdout and stderr go to a file of its own under
// $PAIR_LOOP_HOME, moved beside the run's state with the job. This file stays light (core chunk): nothing of the run.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { PassThrough, type Readable, type Writable } from 'node:stream'
import { context, type InProcessWorker, type WorkerStart } from '../ground/context.ts'
import { fail, PairLoopError } from '../ground/errors.ts'
import type { AttemptJob } from './attempt-files.ts'

/** `sh -c` of this, with the worker's command line as its arguments: in the background, its pid on fd 3, fd 4 its stdin. */
const START_IN_BACKGROUND = '"$@" "$$" <&4 4<&- 3>&- & echo $! >&3'

/** The worker's command line ends `--worker <attempt>`; the shell adds its own pid, the worker's process group. */
export const WORKER_FLAG = '--worker'

/** What the worker was started with, read back from its argv (null: this process is not a worker). */
export function workerArgs(argv: string[]): { attempt: string; pgid: number | null } | null {
  if (argv[0] !== WORKER_FLAG || argv.length < 2) return null
  const pgid = Number(argv[2])
  return { attempt: argv[1]!, pgid: Number.isSafeInteger(pgid) && pgid > 1 ? pgid : null }
}

export interface Launched {
  /** The attempt it is started for (the claim's id). */
  attempt: string
  /** Its pid, once its shell has said it (rejects when it could not be started). */
  pid: Promise<number>
  /** The run it is for, as soon as `review` knows it starts a new attempt: the worker begins on the change. */
  announce: (runId: string) => void
  /** Its run and job, once the run is claimed for it: its log moves to `logPath`, the job goes whole to its stdin. */
  send: (job: AttemptJob, logPath: string) => void
  /** No job after all (a check failed, or `review` attached to a review in flight): it reads nothing and exits; its
   * log goes. Nothing once the job was sent, so every way out may call it. */
  abandon: () => void
}

/** The line that tells a worker its run, before its job (read by job-pipe.ts, which does not load with this file). */
const announceLine = (runId: string) => `${JSON.stringify({ announce: 'run', run_id: runId })}\n`

/** Where a worker's output goes until it knows its run (a file per attempt: workers of two runs never share one). */
export const startingLog = (home: string, attempt: string) => join(home, 'review-workers', `${attempt}.log`)

/**
 * Start a worker from `entry` (the review script: built .cjs, or .ts under Deno and Bun) for a new attempt. Null
 * when there can be no run to review (no runs/ under $PAIR_LOOP_HOME): nothing is started, nothing written.
 */
export function launchWorker(entry: string): Launched | null {
  const ctx = context()
  if (!existsSync(join(ctx.home, 'runs'))) return null
  const attempt = randomUUID()
  const ownLog = startingLog(ctx.home, attempt)
  mkdirSync(dirname(ownLog), { recursive: true })
  const log = openSync(ownLog, 'w', 0o600)
  let started: Started
  try {
    started =
      typeof ctx.reviewWorker === 'function'
        ? inThisProcess(ctx.reviewWorker, { attempt, logPath: ownLog, from: ctx })
        : detached(ctx.reviewWorker ?? runtimeArgv(entry), attempt, log, entry)
  } catch (error) {
    rmSync(ownLog, { force: true })
    throw error
  } finally {
    closeSync(log)
  }
  const { jobPipe } = started
  jobPipe.on('error', () => {}) // a worker gone before its job: the wait finds it dead
  let state: 'starting' | 'sent' | 'abandoned' = 'starting'
  const abandon = () => {
    if (state !== 'starting') return
    state = 'abandoned'
    jobPipe.destroy()
    rmSync(ownLog, { force: true })
  }
  const pid = started.pid.catch((error: unknown) => {
    abandon()
    throw error
  })
  pid.catch(() => {}) // said by whoever awaits it; a worker abandoned before its pid came is no one's failure
  return {
    attempt,
    pid,
    announce: (runId) => {
      if (state === 'starting') jobPipe.write(announceLine(runId))
    },
    send: (job, logPath) => {
      if (state !== 'starting') fail('internal', `the review worker of attempt ${attempt} was ${state} already`)
      mkdirSync(dirname(logPath), { recursive: true })
      renameSync(ownLog, logPath)
      state = 'sent'
      jobPipe.end(`${JSON.stringify(job)}\n`, () => jobPipe.destroy()) // one line: the worker reads up to its end
    },
    abandon,
  }
}

/** A worker on its way: the pipe to its stdin, and its pid once known. */
interface Started {
  jobPipe: Writable
  pid: Promise<number>
}

/** The worker as a process of its own, started in the background by `sh` (which says its pid on fd 3). */
function detached(worker: readonly string[], attempt: string, log: number, entry: string): Started {
  const ctx = context()
  const child = spawn('sh', ['-c', START_IN_BACKGROUND, 'sh', ...worker, WORKER_FLAG, attempt], {
    cwd: ctx.cwd,
    // PAIR_LOOP_HOME made absolute once: the worker must find the same home whatever its directory
    env: { ...ctx.env, PAIR_LOOP_HOME: ctx.home },
    stdio: ['ignore', log, log, 'pipe', 'pipe'],
    detached: true,
  })
  child.unref()
  // the worker may hold its ends of these as long as it runs: each is closed here once it has done its job
  const pidPipe = child.stdio[3] as Readable
  const pid = new Promise<number>((resolve, reject) => {
    let said = ''
    const done = () => {
      pidPipe.destroy()
      const text = said.trim()
      if (/^\d+$/.test(text)) return resolve(Number(text))
      reject(failure(entry))
    }
    pidPipe.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8')
      if (said.includes('\n')) done()
    })
    pidPipe.on('end', done)
    pidPipe.on('error', done)
    child.on('error', done)
  })
  return { jobPipe: child.stdio[4] as Writable, pid }
}

/** The worker run in this process by the Context's host (a test's), its stdin a pipe in memory. */
function inThisProcess(host: InProcessWorker, start: Omit<WorkerStart, 'stdin'>): Started {
  const jobPipe = new PassThrough()
  return { jobPipe, pid: Promise.resolve(host({ ...start, stdin: jobPipe })) }
}

const failure = (entry: string) =>
  new PairLoopError('internal', `could not start the review worker (sh -c … ${entry})`, { entry })

/** How this runtime runs a script: node the built .cjs as it is, bun the sources, deno with this process's permissions. */
export function runtimeArgv(script: string): string[] {
  const deno = (globalThis as { Deno?: DenoPermissions }).Deno
  return [process.execPath, ...(deno ? ['run', ...denoFlags(deno), script] : [script])]
}

interface DenoPermissions {
  permissions: { querySync(descriptor: { name: string; kind?: string }): { state: string } }
}

const DENO_NAMES = ['read', 'write', 'net', 'env', 'run', 'ffi', 'import'] as const
const DENO_SYS_KINDS = ['hostname', 'homedir', 'uid', 'gid', 'osRelease', 'osUptime', 'loadavg', 'networkInterfaces']

/** The permissions this Deno process has, as flags for the worker (never more than the person granted this one). */
function denoFlags(deno: DenoPermissions): string[] {
  const granted = (descriptor: { name: string; kind?: string }) => {
    try {
      return deno.permissions.querySync(descriptor).state === 'granted'
    } catch {
      return false // a permission this Deno does not know
    }
  }
  const flags = DENO_NAMES.filter((name) => granted({ name })).map((name) => `--allow-${name}`)
  if (granted({ name: 'sys' })) return [...flags, '--allow-sys']
  const kinds = DENO_SYS_KINDS.filter((kind) => granted({ name: 'sys', kind }))
  return kinds.length ? [...flags, `--allow-sys=${kinds.join(',')}`] : flags
}
