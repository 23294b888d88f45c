// Running a reviewer: prompt on stdin, a wall-clock timeout that kills the whole process group, a heartbeat.
// node:child_process rather than zx here: the reviewer needs its own process group so nothing it spawns outlives it.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'

export interface RunResult {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: Buffer
  stderr: Buffer
  timedOut: boolean
  durationMs: number
  /** stdout was larger than the cap; what was kept is its beginning. */
  truncated: boolean
}

export interface RunOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  input: string
  timeoutMs: number
  heartbeatMs?: number
  onHeartbeat?: (elapsedMs: number, bytes: number) => void
  maxOutputBytes?: number
  /** Lets a SIGTERM of pair-loop itself take the reviewer down with it. */
  signalRelay?: { kill: (() => void) | null; interrupted?: boolean }
  /** Told the reviewer's pid (its process group's id) as soon as it runs. */
  onSpawn?: (pid: number) => void
}

const KILL_GRACE_MS = 2_000

export function runReviewerProcess(argv: string[], options: RunOptions): Promise<RunResult> {
  const started = Date.now()
  const maxBytes = options.maxOutputBytes ?? 64 * 1024 * 1024
  if (options.signalRelay?.interrupted) {
    return Promise.resolve({
      exitCode: null,
      signal: 'SIGTERM',
      stdout: Buffer.alloc(0),
      stderr: Buffer.from('interrupted before the reviewer started'),
      timedOut: false,
      durationMs: 0,
      truncated: false,
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
    let errBytes = 0
    let truncated = false
    let timedOut = false
    let settled = false

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, signal)
      } catch {}
    }
    const stop = () => {
      killGroup('SIGTERM')
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref()
    }
    if (options.signalRelay) options.signalRelay.kill = stop
    if (child.pid !== undefined) options.onSpawn?.(child.pid)

    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length
      if (outBytes <= maxBytes) out.push(chunk)
      else truncated = true
    })
    child.stderr.on('data', (chunk: Buffer) => {
      errBytes += chunk.length
      if (errBytes <= 1024 * 1024) err.push(chunk)
    })
    child.stdin.on('error', () => {}) // a reviewer that exits without reading its prompt is judged by its exit, not EPIPE
    child.stdin.end(options.input)

    const timer = setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutMs)
    const heartbeat = options.onHeartbeat
      ? setInterval(() => options.onHeartbeat!(Date.now() - started, outBytes), options.heartbeatMs ?? 10_000)
      : undefined

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (heartbeat) clearInterval(heartbeat)
      if (options.signalRelay) options.signalRelay.kill = null
      killGroup('SIGKILL') // whatever the reviewer left running in its group goes with it
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        timedOut,
        durationMs: Date.now() - started,
        truncated,
      })
    }
    child.on('error', (error) => {
      err.push(Buffer.from(String(error.message)))
      finish(null, null)
    })
    // children that inherited the pipes would hold 'close' back: when the reviewer itself exits, its group goes
    child.on('exit', () => killGroup('SIGKILL'))
    child.on('close', finish)
  })
}

/** A process's start time as the kernel counts it (Linux), to tell a pid from a recycled one; null where unknown. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null // field 22, counted after "pid (comm) "
  } catch {
    return null
  }
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
