#!/usr/bin/env node
// pair-loop <command> ...: the dispatcher. Loads only the command it runs, so start-up stays cheap (all of them only
// for --help, to print what each does).
import { edgeContext, exitWith, isMain, runScript } from '../lib/cli/cli.ts'
import type { Context, ScriptIO } from '../lib/ground/context.ts'
import { COMMANDS } from './commands.ts'
import { PairLoopError, errorDocument } from '../lib/ground/errors.ts'
import { closest, didYouMean } from '../lib/ground/suggest.ts'
import { overviewHelp } from '../lib/view/help.ts'

const HELP_WORDS = ['--help', '-h', 'help']

type Out = Pick<ScriptIO, 'stdout' | 'stderr' | 'sameTerminal'>

/** Run the command `argv` names in `ctx` (a real process's by default; tests run commands in-process with their own). */
export async function dispatch(argv: string[], ctx: Context = edgeContext()): Promise<number> {
  const out = ctx.io
  // `pair-loop --text codes` is `pair-loop codes --text`: the common flag may come first
  const [command, ...rest] = argv[0] === '--text' && argv.length > 1 ? [argv[1]!, argv[0], ...argv.slice(2)] : argv
  if (command === '--version' || command === '-V') {
    const { packageRoot } = await import('../lib/ground/package.ts') // only here: every other call starts without it
    const version = packageRoot()?.json.version ?? 'unknown'
    out.stdout(
      rest.includes('--text') ? `pair-loop ${version}\n` : `${JSON.stringify({ version: 1, pair_loop: version })}\n`,
    )
    return 0
  }
  // bare `pair-loop` is a person finding their way: the help, not an error
  if (command === undefined || HELP_WORDS.includes(command)) {
    const topic = rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0]) ? COMMANDS[rest[0]] : undefined
    if (topic) return runScript((await topic()).default, ['--help'], ctx)
    out.stdout(await helpText())
    return 0
  }
  // own keys only: `pair-loop toString` is an unknown command, not Object.prototype's method
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (!load) return unknownCommand(command, rest.includes('--text'), out)
  return runScript((await load()).default, rest, ctx)
}

/** A command that does not exist: usage like any other (one document, one stderr line, exit 2). */
function unknownCommand(command: string, asText: boolean, out: Out): number {
  const names = Object.keys(COMMANDS)
  const suggestion = VERSION_TYPOS.has(command) ? '--version' : closest(command, [...names, '--version', '--help'])
  const what =
    command === '--json'
      ? `${JSON.stringify(command)} is not a command: JSON is already the default (one JSON document on stdout), so leave --json out; --text prints for a person`
      : `unknown command ${JSON.stringify(command)}${didYouMean(suggestion)}`
  const error = new PairLoopError('usage', `${what}; one of: ${names.join(', ')}`, {
    command,
    commands: names,
    ...(suggestion ? { suggestion } : {}),
  })
  out.stdout(asText ? `error: usage (exit 2): ${error.message}\n` : `${JSON.stringify(errorDocument(error))}\n`)
  if (!(asText && out.sameTerminal)) out.stderr(`pair-loop: usage: ${error.message}\n`) // one screen: said once
  return 2
}

/** What people type for --version that is too short or too far for a near-miss guess. */
const VERSION_TYPOS = new Set(['-v', 'version', '-version', '--v', 'ver', '--ver', 'v'])

/** Every command with what it does (each command's own description), the flags they share, and how to begin. */
async function helpText(): Promise<string> {
  const commands = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, load]) => [name, (await load()).default.description] as const),
  )
  return overviewHelp(commands)
}

/** The program: the command line's command, its exit status set (bin/pair-loop.cjs calls it once dist/ is built). */
export const runMain = (argv = process.argv.slice(2)): Promise<void> => exitWith(dispatch(argv))

if (isMain(import.meta)) void runMain()
