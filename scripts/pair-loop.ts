#!/usr/bin/env node
// pair-loop <command> ...: the dispatcher. Loads only the command it runs, so start-up stays cheap.
import { exitWith, isMain, runScript } from '../lib/cli.ts'
import { COMMANDS } from './commands.ts'
import { PairLoopError, errorDocument } from '../lib/errors.ts'

export async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(
      `pair-loop <command> [flags]   (each command: --help)\n\ncommands: ${Object.keys(COMMANDS).join(', ')}\n`,
    )
    return 0
  }
  // own keys only: `pair-loop toString` is an unknown command, not Object.prototype's method
  const load = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (!load) {
    // no command is a usage error like any other: one JSON document, one stderr line, exit 2
    const what = command === undefined ? 'no command given' : `unknown command ${JSON.stringify(command)}`
    const error = new PairLoopError('usage', `${what}; one of: ${Object.keys(COMMANDS).join(', ')}`, {
      command: command ?? null,
      commands: Object.keys(COMMANDS),
    })
    process.stdout.write(`${JSON.stringify(errorDocument(error))}\n`)
    process.stderr.write(`pair-loop: usage: ${error.message}\n`)
    return 2
  }
  return runScript((await load()).default, rest)
}

if (isMain(import.meta)) await exitWith(dispatch(process.argv.slice(2)))
