// The one subprocess wrapper for short commands (git, gh): zx with an explicit preset, so ZX_* env vars can't flip it;
// and, for output too large to hold, a streamed one (node:child_process) whose reader can stop the command.
import { resolve as resolvePath } from 'node:path'
import type { Writable } from 'node:stream'
import { context, type ProgramAnswer } from './context.ts'
import { fail } from './errors.ts'
import { firstLineOf } from './text.ts'

/** A short command's end: the same shape a program run in-process answers with (context.ts). */
export type ExecResult = ProgramAnswer

export interface ExecOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  input?: string
  timeoutMs?: number
}

export async function exec(command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  const ctx = context()
  // the command's directory and environment, never the process's (an in-process command has its own)
  const cwd = resolvePath(ctx.cwd, options.cwd ?? '.')
  const env = { ...(options.env ?? ctx.env) }
  const [input, timeoutMs] = [options.input ?? '', options.timeoutMs ?? 60_000]
  const answered = await ctx.programs?.[command]?.({ args, cwd, env, input, timeoutMs })
  if (answered) return answered
  const { $ } = await import('zx/core')
  const shell = $({
    quiet: true,
    nothrow: true,
    verbose: false,
    cwd,
    env,
    input,
    timeout: `${timeoutMs}ms` as `${number}ms`,
    prefix: '',
    postfix: '',
  })
  const out = await shell`${command} ${args}`
  return { ok: out.exitCode === 0, exitCode: out.exitCode, stdout: out.stdout, stderr: out.stderr }
}

export async function execOrFail(
  command: string,
  args: string[],
  options: ExecOptions & { code?: 'git_error' | 'gh_error' } = {},
): Promise<string> {
  const result = await exec(command, args, options)
  if (!result.ok) {
    const said =
      firstLineOf(result.stderr) ||
      firstLineOf(result.stdout) ||
      (result.exitCode === null ? 'did not run' : `exit ${result.exitCode}`)
    fail(options.code ?? 'git_error', `${command} ${args.slice(0, 2).join(' ')} failed: ${said}`, {
      command: [command, ...args].join(' '),
      exit: result.exitCode,
      stderr: result.stderr.slice(0, 2000),
    })
  }
  return result.stdout
}

export interface StreamResult {
  ok: boolean
  exitCode: number | null
  /** The reader asked to stop: the command was killed there, and its exit status says nothing. */
  stopped: boolean
  timedOut: boolean
  stderr: string
}

const STDERR_KEPT = 64 * 1024

export interface StreamOptions extends ExecOptions {
  /** Input written while the command runs, in place of `input`: its stdin stays open until `feed.end()`. */
  feed?: Feed
}

/** Text for a command's stdin as it becomes known (a `cat-file --batch` asked in rounds), held until the command runs. */
export class Feed {
  private stdin: Writable | null = null
  private queued: string[] = []
  private ended = false

  write(text: string): void {
    if (this.stdin) this.stdin.write(text)
    else this.queued.push(text)
  }

  end(): void {
    this.ended = true
    this.stdin?.end()
  }

  /** execStream's, once the command runs. */
  attach(stdin: Writable): void {
    this.stdin = stdin
    for (const text of this.queued) stdin.write(text)
    this.queued = []
    if (this.ended) stdin.end()
  }
}

/**
 * A command whose stdout is handed to `onData` chunk by chunk, never held whole: `onData` returning false stops
 * reading and kills the command (bounded memory however much it would print). stderr is kept up to 64 KiB.
 */
export async function execStream(
  command: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: StreamOptions = {},
): Promise<StreamResult> {
  // loaded when a command runs one: commands that never do (budget-check, status) start without it
  const { spawn } = await import('node:child_process')
  return new Promise((resolve) => {
    const ctx = context()
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(command, args, {
        cwd: resolvePath(ctx.cwd, options.cwd ?? '.'),
        env: { ...(options.env ?? ctx.env) },
        stdio: [options.input === undefined && !options.feed ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      })
    } catch (error) {
      // spawn throws, rather than emitting 'error', for some failures (a cwd that is a file: ENOTDIR): did not run
      const said = error instanceof Error ? error.message : String(error)
      resolve({ ok: false, exitCode: null, stopped: false, timedOut: false, stderr: said })
      return
    }
    let stderr = ''
    let stopped = false
    let timedOut = false
    let failedToStart: Error | undefined
    const stop = () => {
      child.stdout?.destroy()
      child.kill('SIGKILL')
    }
    const timer = setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutMs ?? 60_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      if (stopped) return
      if (onData(chunk) === false) {
        stopped = true
        stop()
      }
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEPT) stderr += chunk.toString('utf8').slice(0, STDERR_KEPT - stderr.length)
    })
    child.stdin?.on('error', () => {})
    if (options.feed) options.feed.attach(child.stdin!)
    else child.stdin?.end(options.input)
    let settled = false
    const settle = (code: number | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      const said = failedToStart ? `${stderr}${failedToStart.message}` : stderr
      resolve({ ok: code === 0 && !timedOut && !failedToStart, exitCode: code, stopped, timedOut, stderr: said })
    }
    child.on('error', (error) => {
      failedToStart = error
      if (child.pid === undefined) settle(null) // never started: no 'close' is owed
    })
    child.on('close', settle)
  })
}

/** NUL-separated records of a command's output read as a stream: `onRecord` sees each whole, never the output whole. */
export function nulRecords(onRecord: (record: string) => void): {
  onData: (chunk: Buffer) => boolean
  end: () => void
} {
  let carry: Buffer | null = null
  return {
    onData(chunk) {
      const data = carry ? Buffer.concat([carry, chunk]) : chunk
      const end = data.lastIndexOf(0)
      carry = end + 1 < data.length ? Buffer.from(data.subarray(end + 1)) : null
      // a chunk's whole records decoded at once, not one by one: no UTF-8 character holds a NUL byte, so none is cut
      if (end >= 0) for (const record of data.toString('utf8', 0, end).split('\0')) onRecord(record)
      return true
    },
    end() {
      if (carry) onRecord(carry.toString('utf8'))
    },
  }
}
