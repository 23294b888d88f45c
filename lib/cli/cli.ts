// How every script runs: its flags read (lib/cli/flags.ts), its one document printed (JSON, or text for a person with
// --text), every failure a code from the table, and SIGINT/SIGTERM an `interrupted` document.
import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ArgsDef, ParsedArgs } from 'citty'
import { type Context, processContext, type ScriptIO, withContext } from '../ground/context.ts'
import {
  ERROR_CODES,
  type PairLoopError,
  errorDocument,
  fail,
  toPairLoopError,
  interruptedError,
} from '../ground/errors.ts'
import { flagGiven, parseFlags, withCommonArgs } from './flags.ts'
import { checkHomeWritable } from './sandboxed.ts'
import { toStderr, toStdout } from '../ground/stdio.ts'
import { stripControl } from '../ground/text.ts'
import type { Document, Outcome, RawOutput } from '../ground/document.ts'

export const VERSION = 1 as const

export interface ScriptDef<A extends ArgsDef> {
  name: string
  description: string
  args: A
  /** `io` is `ctx.io`: the command's streams. */
  run: (args: ParsedArgs<A>, io: ScriptIO, ctx: Context) => Promise<Document | Outcome | RawOutput>
}

/** A command's module, loaded when it runs (so each command loads only what it uses). */
// biome-ignore lint/suspicious/noExplicitAny: each command declares its own flags; a loader only loads and runs it
export type ScriptLoader = () => Promise<{ default: ScriptDef<any> }>

export function defineScript<A extends ArgsDef>(def: ScriptDef<A>): ScriptDef<A> {
  return def
}

/** Flags every command that works on an existing run shares. */
export const runArgs = {
  run: { type: 'string', description: 'run id (default: the active run of the repository here)', valueHint: 'id' },
  cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
} as const satisfies ArgsDef

/** How long a command has, after a signal, to stop on its own (a review ends its reviewer and records the attempt). */
const INTERRUPT_GRACE_MS = 4_000

/**
 * The process's signals `names` turned into an aborted `signal` (its reason the signal's name) until `dispose`:
 * while they are listened for, none of them ends the process.
 */
export function signalsAsAbort(names: readonly NodeJS.Signals[]): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController()
  const onSignal = (name: NodeJS.Signals) => controller.abort(name)
  for (const name of names) process.on(name, onSignal)
  return {
    signal: controller.signal,
    dispose: () => {
      for (const name of names) process.off(name, onSignal)
    },
  }
}

/** The process's own streams, with SIGINT and SIGTERM turned into an aborted `signal` while the command runs. */
function processIO(): ScriptIO & { dispose: () => void } {
  const { signal, dispose } = signalsAsAbort(['SIGINT', 'SIGTERM'])
  return {
    get stdin() {
      return process.stdin // a getter: touching process.stdin sets the stream up, so only a command that reads it does
    },
    stdout: toStdout,
    stderr: toStderr,
    signal,
    // getters too: process.stdout/stderr are set up on first touch (a pipe's net.Socket, a file's SyncWriteStream: the
    // stream modules, ~5 ms), and only a --text view asks; the output itself is written to fds 1 and 2 (stdio.ts)
    get columns() {
      return process.stdout.isTTY ? process.stdout.columns : undefined
    },
    get sameTerminal() {
      return Boolean(process.stdout.isTTY && process.stderr.isTTY)
    },
    dispose,
  }
}

/** A real process's command: the process's world, its streams, SIGINT and SIGTERM an aborted signal. */
export const edgeContext = (): Context => processContext(processIO())

/** Settles (rejecting) once the signal has been aborted for `graceMs`: a command that does not stop by then is cut. */
function cutAfterSignal(signal: AbortSignal, graceMs: number): Promise<never> {
  return new Promise((_, reject) => {
    // unref'd: a command that stopped in time (review prints its in-flight document) exits at once, not at the cut
    const cut = () => (setTimeout(() => reject(interruptedError(signal)), graceMs) as { unref?: () => void }).unref?.()
    if (signal.aborted) cut()
    else signal.addEventListener('abort', cut, { once: true })
  })
}

/** stdin for an in-process call: the given text, once. */
export async function* textInput(text: string): AsyncIterable<Uint8Array> {
  yield new TextEncoder().encode(text)
}

/**
 * Parse, run, print, with `given` as the Context (bare streams: the process's world with them); returns the exit
 * status. Never throws, never calls process.exit (it can cut stdout short).
 */
export function runScript<A extends ArgsDef>(
  def: ScriptDef<A>,
  rawArgs: string[],
  given: Context | ScriptIO = edgeContext(),
): Promise<number> {
  const ctx = isContext(given) ? given : processContext(given)
  return withContext(ctx, () => runIn(ctx, def, rawArgs))
}

const isContext = (given: Context | ScriptIO): given is Context => 'io' in given && 'env' in given

async function runIn<A extends ArgsDef>(ctx: Context, def: ScriptDef<A>, rawArgs: string[]): Promise<number> {
  const { io } = ctx
  const args = withCommonArgs(def.args)
  if (flagGiven(args, rawArgs, ['--help', '-h'])) {
    io.stdout((await import('../view/help.ts')).commandHelp({ ...def, args })) // loaded for --help only
    return 0
  }
  // JSON unless the person asked for text: never decided by a terminal (some agents run commands in a pseudo-terminal)
  const asText = flagGiven(args, rawArgs, ['--text'])
  try {
    const parsed = parseFlags({ args }, rawArgs) as ParsedArgs<A>
    // --cwd against the command's own directory (an in-process command's is not the process's)
    const flags = parsed as Record<string, unknown>
    if (typeof flags.cwd === 'string' && flags.cwd !== '') flags.cwd = resolve(ctx.cwd, flags.cwd)
    checkHomeWritable(ctx, def.name) // a sandboxed shell: said before anything is written, with the MCP tool to call
    const running = def.run(parsed, io, ctx)
    const result = io.signal
      ? await Promise.race([running, cutAfterSignal(io.signal, INTERRUPT_GRACE_MS)])
      : await running
    if (isRawOutput(result)) {
      io.stdout(result.raw) // another tool's format (SARIF, rdjsonl) is printed as it is, --text or not
      return 0
    }
    const { document, exit } = isOutcome(result) ? result : { document: result, exit: 0 }
    io.stdout(
      asText
        ? (await import('../view/text-view.ts')).documentText(def.name, document, io.columns)
        : jsonLine({ version: VERSION, ...document }),
    )
    return exit
  } catch (caught) {
    const error = toPairLoopError(caught)
    io.stdout(asText ? errorText(error) : jsonLine(errorDocument(error)))
    // in a terminal that is both streams, the --text line on stdout is the error line: said once, not twice
    if (!(asText && io.sameTerminal)) io.stderr(`pair-loop ${def.name}: ${error.code}: ${oneLine(error.message)}\n`)
    return ERROR_CODES[error.code].exit
  }
}

/** A document as one JSON line, every fraction rounded to 1e-9: dollars summed show 0.056682, not 0.056681999999999996. */
const jsonLine = (document: object) => `${JSON.stringify(document, withoutFloatNoise)}\n`
const withoutFloatNoise = (_key: string, value: unknown) =>
  typeof value === 'number' && !Number.isInteger(value) && Math.abs(value) < 1e6 ? Math.round(value * 1e9) / 1e9 : value

/** An error for a person: one line, the code and its exit status, then what went wrong. */
const errorText = (error: PairLoopError) =>
  `error: ${error.code} (exit ${ERROR_CODES[error.code].exit}): ${oneLine(error.message)}\n`

/** Entry point of a script file: run with the process's argv and set the exit code. */
export async function main<A extends ArgsDef>(def: ScriptDef<A>, rawArgs = process.argv.slice(2)): Promise<void> {
  await exitWith(runScript(def, rawArgs, edgeContext()))
}

/** Set the exit status; after a signal, end the process once the document is out (nothing else may still print). */
export async function exitWith(status: Promise<number>): Promise<void> {
  process.exitCode = await status
  if (process.exitCode === ERROR_CODES.interrupted.exit) process.exit() // the document is out: output is synchronous
}

function isRawOutput(value: Document | Outcome | RawOutput): value is RawOutput {
  return typeof (value as { raw?: unknown }).raw === 'string' && Object.keys(value).length === 1
}

function isOutcome(value: Document | Outcome): value is Outcome {
  return (
    typeof value.exit === 'number' &&
    typeof value.document === 'object' &&
    value.document !== null &&
    Object.keys(value).length === 2
  )
}

/** The stderr line is one line, whatever the message holds, and carries no escape sequence to the terminal. */
export const oneLine = (text: string) =>
  stripControl(text)
    .replace(/\s*\n+\s*/g, ' ')
    .trim()

/** A whole number flag, e.g. `--max-rounds 3`: anything else is `usage` naming the flag. */
export function integerFlag(
  value: string | undefined,
  flag: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    fail(
      'usage',
      `--${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}, got ${JSON.stringify(value)}`,
      { flag: `--${flag}` },
    )
  }
  return Number(value)
}

/** A non-negative decimal flag, e.g. `--budget-usd 2.50`. */
export function decimalFlag(
  value: string | undefined,
  flag: string,
  { min = 0, positive = false } = {},
): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || (positive && Number(value) <= 0)) {
    const range = positive ? 'greater than 0' : `≥ ${min}`
    fail('usage', `--${flag} must be a number ${range}, got ${JSON.stringify(value)}`, { flag: `--${flag}` })
  }
  return Number(value)
}

/** True when this module is the program being run (Deno and Bun say so; on Node compare with argv[1]). */
export function isMain(meta: ImportMeta): boolean {
  const flag = (meta as { main?: boolean }).main
  if (typeof flag === 'boolean') return flag
  const entry = process.argv[1]
  if (!entry) return false
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(meta.url))
  } catch {
    return false
  }
}
