#!/usr/bin/env node
// stop-hook: the agent's Stop hook. Reads the hook's JSON on stdin; prints the hook's answer (not a pair-loop document:
// the agents read only their own fields), sending the agent back once with the next command while work is not handed over.
import { defineScript, isMain, main, rawOutput, runArgs } from '../lib/cli.ts'
import { type StopInput, stopHookAnswer } from '../lib/stop-hook.ts'

const MAX_INPUT_BYTES = 1 << 20

const stopHook = defineScript({
  name: 'stop-hook',
  description:
    "The Claude Code / Codex Stop hook: while this repository has an active run, send the agent back once (with the next command) when it stops with changes not handed over or a review not run. Reads the hook's JSON on stdin.",
  args: { cwd: runArgs.cwd },
  async run(args, io) {
    const answer = await stopHookAnswer(await readInput(io.stdin), args.cwd ?? process.cwd())
    return rawOutput(JSON.stringify(answer))
  },
})

/** The hook's JSON; anything unreadable is an empty input (the hook then lets the agent stop). */
async function readInput(stdin: AsyncIterable<Uint8Array | string>): Promise<StopInput> {
  let text = ''
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    if (text.length > MAX_INPUT_BYTES) return {}
  }
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null ? (parsed as StopInput) : {}
  } catch {
    return {}
  }
}

export default stopHook
if (isMain(import.meta)) void main(stopHook)
