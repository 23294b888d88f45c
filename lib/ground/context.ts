// The outside world, read once at the edge: home, environment, clock, pid, host, working directory and streams (the
// PAIR_LOOP_* settings are read from its environment by lib/ground/settings.ts). Every other lib file reads them from here
// (test/architecture.test.ts checks it), so a command runs in-process with a test Context as in a process.
import { AsyncLocalStorage } from 'node:async_hooks'
import { homedir, hostname, tmpdir, userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import { toStderr, toStdout } from './stdio.ts'

/** A command's streams, injected so demo and tests run commands in-process with buffers instead of patching globals. */
export interface ScriptIO {
  /** What a body file `-` reads. */
  stdin: AsyncIterable<Uint8Array | string>
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** Aborted by SIGINT/SIGTERM (with the signal's name as its reason): a command that waits stops on it. */
  signal?: AbortSignal
  /** stdout's width when it is a terminal (a --text view wraps to it; 100 otherwise). */
  columns?: number
  /** stdout and stderr are one terminal: a --text error is printed once, not on both. */
  sameTerminal?: boolean
}

/** A command's world. Made once per command (processContext at a script's entry, testContext in tests). */
export interface Context {
  /** The environment the command was given (never mutated; children get a copy or a derived one). */
  readonly env: Readonly<NodeJS.ProcessEnv>
  /** The directory the command started in (commands never change directory). */
  readonly cwd: string
  /** `$PAIR_LOOP_HOME`, absolute (default ~/.pair-loop). */
  readonly home: string
  /** Milliseconds since the epoch: the clock. */
  readonly now: () => number
  readonly pid: number
  readonly host: string
  readonly io: ScriptIO
  /**
   * How `review` starts its detached worker: a runtime and the review script (default this runtime and script), or a
   * worker run in this process (a test's: see InProcessWorker).
   */
  readonly reviewWorker?: readonly string[] | InProcessWorker
  /** Programs run in this process instead of being started (a test's fake gh), by the name a command calls. */
  readonly programs?: Readonly<Record<string, InProcessProgram>>
}

/**
 * A review worker run in this process, for an attempt: `review` writes its run and job to `stdin`, and its output goes
 * to the file at `logPath` (opened before this returns: `review` moves it). Answers the pid that stands for the worker
 * (its liveness, its process group and the signals sent to it are the worker's).
 */
export type InProcessWorker = (start: WorkerStart) => number

export interface WorkerStart {
  attempt: string
  stdin: AsyncIterable<Uint8Array>
  logPath: string
  /** The Context of the `review` that starts it (the worker's environment, directory, home and programs). */
  from: Context
}

/** One call of a program run in-process: its answer, or undefined to have the real program started after all. */
export type InProcessProgram = (call: ProgramCall) => Promise<ProgramAnswer | undefined>

/** What a program run in-process answers: what exec would have read from the process. */
export interface ProgramAnswer {
  ok: boolean
  exitCode: number | null
  stdout: string
  stderr: string
}

export interface ProgramCall {
  args: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  input: string
  timeoutMs: number
}

/** A Context from the process's own world (anything in `overrides` in its place). */
export function processContext(io: ScriptIO, overrides: Partial<Context> = {}): Context {
  const env = overrides.env ?? process.env
  const cwd = overrides.cwd ?? process.cwd()
  let host = overrides.host
  return {
    env,
    cwd,
    home: overrides.home ?? homeOf(env, cwd),
    now: overrides.now ?? Date.now,
    pid: overrides.pid ?? process.pid,
    // read when asked: most commands never need it
    get host() {
      host ??= hostname()
      return host
    },
    io,
    ...(overrides.reviewWorker ? { reviewWorker: overrides.reviewWorker } : {}),
    ...(overrides.programs ? { programs: overrides.programs } : {}),
  }
}

/** `$PAIR_LOOP_HOME` as the environment gives it, made absolute against the starting directory. */
export function homeOf(env: Readonly<NodeJS.ProcessEnv>, cwd: string): string {
  return env.PAIR_LOOP_HOME ? resolve(cwd, env.PAIR_LOOP_HOME) : join(userHome(env), '.pair-loop')
}

/** `$HOME` as the agents' CLIs read it; without one, the account's home directory. */
export function userHome(env: Readonly<NodeJS.ProcessEnv> = context().env): string {
  if (env.HOME) return env.HOME
  try {
    return userInfo().homedir
  } catch {
    return homedir() // no account entry (a container's bare uid)
  }
}

/**
 * The person's home as the account database says (never $HOME: the command's environment is the coder's to set):
 * where the person's agents keep their config and transcripts unless the person's config says otherwise.
 */
export function personHome(): string {
  try {
    return userInfo().homedir
  } catch {
    return homedir() // no account entry (a container's bare uid)
  }
}

/** The temp folder the Context's environment names ($TMPDIR, read as os.tmpdir() reads it). */
export function tempRoot(env: Readonly<NodeJS.ProcessEnv> = context().env): string {
  if (process.platform === 'win32') return tmpdir()
  const dir = env.TMPDIR || env.TMP || env.TEMP || '/tmp'
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir
}

const current = new AsyncLocalStorage<Context>()

/** Run `work` with `ctx` as the Context every lib function below it reads (in-process calls may run side by side). */
export function withContext<T>(ctx: Context, work: () => T): T {
  return current.run(ctx, work)
}

/** The Context of the command running now; outside any command (a library caller, the review worker), the process's. */
export function context(): Context {
  return current.getStore() ?? processContext(processStreams)
}

/** The process's own streams, without signal handling (only a script's entry installs that: lib/cli/cli.ts). */
const processStreams: ScriptIO = {
  get stdin() {
    return process.stdin
  },
  stdout: toStdout,
  stderr: toStderr,
}

/** The time now as an ISO string, from the Context's clock. */
export const nowIso = (): string => new Date(context().now()).toISOString()

/** The time now as a Date, from the Context's clock. */
export const nowDate = (): Date => new Date(context().now())
