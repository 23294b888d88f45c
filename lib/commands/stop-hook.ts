// stop-hook: the agent's Stop hook. Reads the hook's JSON on stdin and answers in the hook's own format (the agents
// read only their own fields), sending the agent back once with the next command while work is not handed over.
import { rawOutput } from '../ground/document.ts'
import type { Context } from '../ground/context.ts'
import { type StopInput, stopHookAnswer } from '../review/stop-hook.ts'

const MAX_INPUT_BYTES = 1 << 20

export interface StopHookOptions {
  /** Where the agent stopped, when the hook's input does not say. */
  cwd?: string
}

export async function run(ctx: Context, options: StopHookOptions) {
  const answer = await stopHookAnswer(await readInput(ctx.io.stdin), options.cwd ?? ctx.cwd)
  return rawOutput(JSON.stringify(answer))
}

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
