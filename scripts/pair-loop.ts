#!/usr/bin/env node
// pair-loop <command> ...: the dispatcher. Loads only the command it runs, so start-up stays cheap.
import { isMain, runScript, type ScriptDef } from '../lib/cli.ts'
import { PairLoopError, errorDocument } from '../lib/errors.ts'

type Loader = () => Promise<{ default: ScriptDef<any> }>

export const COMMANDS: Record<string, Loader> = {
  start: () => import('./start.ts'),
  'coder-done': () => import('./coder-done.ts'),
  reply: () => import('./reply.ts'),
  finish: () => import('./finish.ts'),
  status: () => import('./status.ts'),
  codes: () => import('./codes.ts'),
}

export async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`pair-loop <command> [flags]   (each command: --help)\n\ncommands: ${Object.keys(COMMANDS).join(', ')}\n`)
    return command === undefined ? 2 : 0
  }
  const load = COMMANDS[command]
  if (!load) {
    const error = new PairLoopError('usage', `unknown command ${JSON.stringify(command)}; one of: ${Object.keys(COMMANDS).join(', ')}`, { command, commands: Object.keys(COMMANDS) })
    process.stdout.write(JSON.stringify(errorDocument(error)) + '\n')
    process.stderr.write(`pair-loop: usage: ${error.message}\n`)
    return 2
  }
  return runScript((await load()).default, rest)
}

if (isMain(import.meta)) process.exitCode = await dispatch(process.argv.slice(2))
