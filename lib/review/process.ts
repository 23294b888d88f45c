// Running a reviewer: prompt on stdin, a wall-clock timeout that kills the whole process group, a heartbeat, and
// bounds that hold whatever the reviewer's descendants do: output is buffered up to a cap only (past it the reviewer
// is stopped), and once the reviewer exits, or a kill's grace is over, its pipes are read for a short grace at most
// and then closed, so a descendant that left the group (setsid) and keeps them open cannot hold the review.
// node:child_process rather than zx here: the reviewer needs its own process group so nothing it spawns outlives it.
import { spawn } from 'node:child_process'
import { context } from '../ground/context.ts'
import { processStartTime } from '../ground/processes.ts'
import { settings } from '../ground/settings.ts'

export interface RunResult {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: Buffer
  stderr: Buffer
  timedOut: boolean
  durationMs: number
  /** stdout went past its cap: what was kept is its beginning, the reviewer was stopped; never read for a verdict. */
  truncated: boolean
  /** The cap stdout was held to. */
  maxOutputBytes?: number
}

export interface RunOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  input: string
  timeoutMs: number
  heartbeatMs?: number
  onHeartbeat?: (elapsedMs: number, bytes: number) => void
  /** Default: `outputCap()`. */
  maxOutputBytes?: number
  /** Lets a cancel or a watchdog take the reviewer down (`kill`), and a watcher see its output as it comes. */
  signalRelay?: CallControl
  /** Told the reviewer's pid (its process group's id) as soon as it runs. */
  onSpawn?: (pid: number) => void
}

/**
 * The running call's controls: `kill` ends it (set while it runs), `interrupted` stops a call before it starts, and
 * `onOutput` is told every chunk the reviewer prints (the worker's heartbeat and no-output watchdog).
 */
export interface CallControl {
  kill: (() => void) | null
  interrupted?: boolean
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void
}

/** From SIGTERM to SIGKILL of the group; at the SIGKILL the pipes are closed whatever holds them. */
const KILL_GRACE_MS = 2_000
/** How long output is still read after the reviewer's own process exited (a descendant may hold the pipes). */
export const OUTPUT_GRACE_MS = 2_000
/** After the SIGKILL, how long to wait for the reviewer's exit status before settling without it. */
const EXIT_WAIT_MS = 500
const STDERR_CAP = 1024 * 1024

/** The cap on a reviewer's stdout: 64 MiB, or PAIR_LOOP_REVIEWER_MAX_OUTPUT_BYTES (a positive integer) for tests. */
export const outputCap = (): number => settings().reviewerMaxOutputBytes

export function runReviewerProcess(argv: string[], options: RunOptions): Promise<RunResult> {
  const started = context().now()
  const maxBytes = options.maxOutputBytes ?? outputCap()
  if (options.signalRelay?.interrupted) {
    return Promise.resolve({
      exitCode: null,
      signal: 'SIGTERM',
      stdout: Buffer.alloc(0),
      stderr: Buffer.from('interrupted before the reviewer started'),
      timedOut: false,
      durationMs: 0,
      truncated: false,
      maxOutputBytes: maxBytes,
    })
  }
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let outBytes = 0
    let kept = 0
    let errBytes = 0
    let truncated = false
    let timedOut = false
    let settled = false
    let stopping = false
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
    const timers: NodeJS.Timeout[] = []
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms))

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, signal)
      } catch {}
    }
    /** Stop reading: whatever still holds the pipes (a descendant outside the group) no longer holds the review. */
    const closePipes = () => {
      child.stdin.destroy()
      child.stdout.destroy()
      child.stderr.destroy()
    }
    const settleWithoutExit = () => finish(exited?.code ?? null, exited?.signal ?? 'SIGKILL')
    const stop = () => {
      if (stopping || settled) return
      stopping = true
      killGroup('SIGTERM')
      later(KILL_GRACE_MS, () => {
        killGroup('SIGKILL')
        closePipes()
        if (exited) finish(exited.code, exited.signal)
        else later(EXIT_WAIT_MS, settleWithoutExit) // SIGKILL: its exit is a matter of moments
      })
    }
    if (options.signalRelay) options.signalRelay.kill = stop
    if (child.pid !== undefined) options.onSpawn?.(child.pid)

    child.stdout.on('data', (chunk: Buffer) => {
      options.signalRelay?.onOutput?.(chunk, 'stdout')
      outBytes += chunk.length
      if (truncated) return // drained, not kept: the reviewer is being stopped
      if (kept + chunk.length <= maxBytes) {
        out.push(chunk)
        kept += chunk.length
        return
      }
      out.push(chunk.subarray(0, maxBytes - kept))
      kept = maxBytes
      truncated = true // output past its cap can't be a review: a verdict is only ever read from complete output
      stop()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      options.signalRelay?.onOutput?.(chunk, 'stderr')
      if (errBytes < STDERR_CAP) err.push(chunk.subarray(0, STDERR_CAP - errBytes))
      errBytes += chunk.length
    })
    child.stdin.on('error', () => {}) // a reviewer that exits without reading its prompt is judged by its exit, not EPIPE
    child.stdin.end(options.input)

    later(options.timeoutMs, () => {
      if (exited) return // it already exited: only its output grace is running
      timedOut = true
      stop()
    })
    const heartbeat = options.onHeartbeat
      ? setInterval(() => options.onHeartbeat!(context().now() - started, outBytes), options.heartbeatMs ?? 10_000)
      : undefined

    function finish(exitCode: number | null, signal: NodeJS.Signals | null) {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      if (heartbeat) clearInterval(heartbeat)
      if (options.signalRelay) options.signalRelay.kill = null
      killGroup('SIGKILL') // whatever the reviewer left running in its group goes with it
      closePipes()
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        timedOut,
        durationMs: context().now() - started,
        truncated,
        maxOutputBytes: maxBytes,
      })
    }
    child.on('error', (error) => {
      err.push(Buffer.from(String(error.message)))
      finish(null, null)
    })
    child.on('exit', (code, signal) => {
      exited = { code, signal }
      // its group goes with it; a descendant that left the group may still hold the pipes: read them a moment more
      killGroup('SIGKILL')
      later(OUTPUT_GRACE_MS, () => finish(code, signal))
    })
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal))
  })
}
/** End the process group of a reviewer whose review was killed outright, if it is still that reviewer. */
export function reapReviewerGroup(pgid: number | null | undefined, start: string | null | undefined): boolean {
  if (!pgid || !start) return false // without a start time a recycled pid can't be told apart: leave it
  if (processStartTime(pgid) !== start) return false // gone, or the pid now belongs to someone else
  try {
    process.kill(-pgid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}
