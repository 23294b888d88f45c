#!/usr/bin/env node
// pair-loop <command> ...: the dispatcher. Loads only the command it runs, so start-up stays cheap (all of them only
// for --help, to print what each does).
import { exitWith, isMain, runScript, type ScriptIO } from '../lib/cli.ts'
import { COMMANDS } from './commands.ts'
import { PairLoopError, errorDocument } from '../lib/errors.ts'
import { closest, didYouMean } from '../lib/suggest.ts'
import { toStderr, toStdout } from '../lib/stdio.ts'

const HELP_WORDS = ['--help', '-h', 'help']

/** What the dispatcher writes to (the process's streams; tests pass buffers). */
type Out = Pick<ScriptIO, 'stdout' | 'stderr'>
const processOut: Out = { stdout: toStdout, stderr: toStderr }

export async function dispatch(argv: string[], out: Out = processOut): Promise<number> {
  // `pair-loop --text codes` is `pair-loop codes --text`: the common flag may come first
  const [command, ...rest] = argv[0] === '--text' && argv.length > 1 ? [argv[1]!, argv[0], ...argv.slice(2)] : argv
  if (command === '--version' || command === '-V') {
    const { packageRoot } = await import('../lib/package.ts') // only here: every other call starts without it
    const version = packageRoot()?.json.version ?? 'unknown'
    out.stdout(
      rest.includes('--text') ? `pair-loop ${version}\n` : `${JSON.stringify({ version: 1, pair_loop: version })}\n`,
    )
    return 0
  }
  if (command !== undefined && HELP_WORDS.includes(command)) {
    const topic = rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0]) ? COMMANDS[rest[0]] : undefined
    if (topic) return runScript((await topic()).default, ['--help'])
    out.stdout(await helpText())
    return 0
  }
  // own keys only: `pair-loop toString` is an unknown command, not Object.prototype's method
  const load = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (!load) return unknownCommand(command, rest.includes('--text'), out)
  return runScript((await load()).default, rest)
}

/** No command, or one that does not exist: usage like any other (one document, one stderr line, exit 2). */
function unknownCommand(command: string | undefined, asText: boolean, out: Out): number {
  const names = Object.keys(COMMANDS)
  const suggestion = command === undefined ? undefined : closest(command, names)
  const what = command === undefined ? 'no command given' : `unknown command ${JSON.stringify(command)}`
  const error = new PairLoopError('usage', `${what}${didYouMean(suggestion)}; one of: ${names.join(', ')}`, {
    command: command ?? null,
    commands: names,
    ...(suggestion ? { suggestion } : {}),
  })
  out.stdout(asText ? `error: usage (exit 2): ${error.message}\n` : `${JSON.stringify(errorDocument(error))}\n`)
  out.stderr(`pair-loop: usage: ${error.message}\n`)
  return 2
}

const COMMON_FLAGS: Array<[string, string]> = [
  ['--run <id>', 'the run a command works on (default: the active run of the repository here)'],
  ['--cwd <dir>', 'work as if started in this directory'],
  ['--text', 'print the result for a person (aligned tables) instead of one JSON document'],
  ['--help, -h', 'this help; `pair-loop <command> --help` for a command and its flags'],
  ['--version', 'print {"version":1,"pair_loop":"<version>"}'],
]

/** Every command with what it does (each command's own description), and the flags they share. */
async function helpText(): Promise<string> {
  const commands = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, load]) => [name, (await load()).default.description] as const),
  )
  const rows = (pairs: ReadonlyArray<readonly [string, string]>) => {
    const width = Math.max(...pairs.map(([name]) => name.length))
    return pairs.map(([name, text]) => `  ${name.padEnd(width)}  ${text}\n`).join('')
  }
  return [
    'pair-loop: a coder <-> reviewer loop between two AI coding agents, one small command per step.\n\n',
    'Usage: pair-loop <command> [flags]\n\n',
    `Commands:\n${rows(commands)}\n`,
    `Common flags:\n${rows(COMMON_FLAGS)}\n`,
    'Each command prints one JSON document on stdout and fails with a code from `pair-loop codes`.\n',
  ].join('')
}

if (isMain(import.meta)) void exitWith(dispatch(process.argv.slice(2)))
