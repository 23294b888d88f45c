// The outside world, read once at the edge: home, environment, clock, pid, host, working directory, streams and the
// PAIR_LOOP_* settings. Every other lib file reads them from here (test/architecture.test.ts checks it), so a command
// runs in-process with a test Context as it runs in a process with the real one.
import { AsyncLocalStorage } from 'node:async_hooks'
import { hostname, homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { ScriptIO } from './cli.ts'

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
}

/** A Context from the process's own world. */
export function processContext(io: ScriptIO, overrides: Partial<Context> = {}): Context {
  const env = overrides.env ?? process.env
  const cwd = overrides.cwd ?? process.cwd()
  return {
    env,
    cwd,
    home: overrides.home ?? homeOf(env, cwd),
    now: overrides.now ?? Date.now,
    pid: overrides.pid ?? process.pid,
    host: overrides.host ?? hostname(),
    io,
  }
}

/** `$PAIR_LOOP_HOME` as the environment gives it, made absolute against the starting directory. */
export function homeOf(env: Readonly<NodeJS.ProcessEnv>, cwd: string): string {
  return env.PAIR_LOOP_HOME ? resolve(cwd, env.PAIR_LOOP_HOME) : join(homedir(), '.pair-loop')
}

const current = new AsyncLocalStorage<Context>()

/** Run `work` with `ctx` as the Context every lib function below it reads (in-process calls may run side by side). */
export function withContext<T>(ctx: Context, work: () => T): T {
  return current.run(ctx, work)
}

/** The Context of the command running now; outside any command (a library caller), the process's own. */
export function context(): Context {
  return current.getStore() ?? processContext(silentIO)
}

const silentIO: ScriptIO = {
  stdin: (async function* () {})(),
  stdout: () => {},
  stderr: () => {},
}

/** The time now as an ISO string, from the Context's clock. */
export const nowIso = (): string => new Date(context().now()).toISOString()
