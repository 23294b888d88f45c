// Starting the detached worker that owns a reviewer call. It gets a session and process group of its own (setsid), and
// it is not a child of this `review`: a shell in between starts it in the background and exits at once, so neither a
// signal to this process, nor a kill of its process tree (a coder's shell tool at its timeout), nor the end of the
// agent's turn reaches it. Its stdout and stderr go to a file beside the run's state; its job comes on its stdin, sent
// once `review` has claimed the run for it, so the worker starts up while `review` makes its checks.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fail } from '../errors.ts'
import type { AttemptJob } from './attempt-files.ts'
import { context } from '../context.ts'

/** `sh -c` of this, with the worker's command line as its arguments: in the background, its pid on fd 3, fd 4 its stdin. */
const START_IN_BACKGROUND = '"$@" "$$" <&4 4<&- 3>&- & echo $! >&3'

/** The worker's command line ends `--worker <run> <attempt>`; the shell adds its own pid, the worker's process group. */
export const WORKER_FLAG = '--worker'

/** What the worker was started with, read back from its argv (null: this process is not a worker). */
export function workerArgs(argv: string[]): { runId: string; attempt: string; pgid: number | null } | null {
  if (argv[0] !== WORKER_FLAG || argv.length < 3) return null
  const pgid = Number(argv[3])
  return { runId: argv[1]!, attempt: argv[2]!, pgid: Number.isSafeInteger(pgid) && pgid > 1 ? pgid : null }
}

export interface Launched {
  pid: number
  /** Its job, once the run is claimed for it: the worker reads it whole from its stdin. */
  send: (job: AttemptJob) => void
  /** No job after all (a check failed): the worker reads nothing, and exits; its empty log goes. */
  abandon: () => void
}

/** Start the worker for `attempt` from `entry` (the review script: built .cjs, or .ts under Deno and Bun). */
export async function launchWorker(entry: string, runId: string, attempt: string, logPath: string): Promise<Launched> {
  mkdirSync(dirname(logPath), { recursive: true })
  // its own name until the job is sent: a worker abandoned leaves the last attempt's log as it was
  const ownLog = `${logPath}.${attempt}`
  const log = openSync(ownLog, 'w', 0o600)
  let child: ChildProcess
  try {
    const ctx = context()
    // a Context may name the worker's runtime and script (an in-process test's `review` starts the built one)
    const worker = ctx.reviewWorker ?? runtimeArgv(entry)
    child = spawn('sh', ['-c', START_IN_BACKGROUND, 'sh', ...worker, WORKER_FLAG, runId, attempt], {
      cwd: ctx.cwd,
      // PAIR_LOOP_HOME made absolute once: the worker must find the same home whatever its directory
      env: { ...ctx.env, PAIR_LOOP_HOME: ctx.home },
      stdio: ['ignore', log, log, 'pipe', 'pipe'],
      detached: true,
    })
  } finally {
    closeSync(log)
  }
  child.unref()
  // the worker may hold its ends of these as long as it runs: each is closed here once it has done its job
  const pidPipe = child.stdio[3] as Readable
  const jobPipe = child.stdio[4] as Writable
  jobPipe.on('error', () => {}) // a worker gone before its job: the wait finds it dead
  const pid = await new Promise<string>((resolve) => {
    let said = ''
    const done = () => {
      pidPipe.destroy()
      resolve(said.trim())
    }
    pidPipe.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8')
      if (said.includes('\n')) done()
    })
    pidPipe.on('end', done)
    pidPipe.on('error', done)
    child.on('error', done)
  })
  if (!/^\d+$/.test(pid)) {
    jobPipe.destroy()
    rmSync(ownLog, { force: true })
    fail('internal', `could not start the review worker (sh -c … ${entry}); see ${logPath}`)
  }
  return {
    pid: Number(pid),
    send: (job) => {
      renameSync(ownLog, logPath)
      jobPipe.end(JSON.stringify(job), () => jobPipe.destroy())
    },
    abandon: () => {
      jobPipe.destroy()
      rmSync(ownLog, { force: true })
    },
  }
}

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
