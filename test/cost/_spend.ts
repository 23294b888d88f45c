// Spending by a coder in a sandboxed repository, for the CLI tests of the cost rules: Claude Code sessions written
// where Claude Code writes them, and a hand-over with a change in the tree. Prices: transcripts-and-pricing.md §5.
import { realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { claudeProjectFolder } from '../../lib/agents/locate.ts'
import type { sandbox } from '../_helpers.ts'
import { claudeAssistant, writeLines } from './_gen.ts'

export type Sandbox = ReturnType<typeof sandbox>

/** $15 input / $75 output per million tokens, no 200k tier: a million output tokens is $75.00. */
export const OPUS_41 = 'claude-opus-4-1-20250805'
/** $1 input / $5 output per million tokens: ten input tokens are $0.00001. */
export const HAIKU = 'claude-haiku-4-5-20251001'
/** Claude Code 2.1.332's default model: not in the price table. */
export const UNPRICED = 'claude-opus-5-5'

/** Claude Code's project folder for the repository (or a folder below it), under `configDir`. */
export function claudeFolder(sb: Sandbox, below = '', configDir = sb.env.CLAUDE_CONFIG_DIR!): string {
  return join(configDir, 'projects', claudeProjectFolder(join(realpathSync(sb.repo), below)))
}

export interface Spend {
  model: string
  input?: number
  output?: number
}

let responses = 0

/** Appends one response per spend, timed now, to session `sid`'s transcript in `folder`; returns its path. */
export function writeSession(folder: string, sid: string, spends: Spend[], cwd?: string): string {
  const path = join(folder, `${sid}.jsonl`)
  const now = Date.now()
  writeLines(
    path,
    spends.map((spend, i) => {
      const n = ++responses
      return claudeAssistant({
        sessionId: sid,
        ts: new Date(now + i).toISOString(),
        id: `msg_spend_${n}`,
        requestId: `req_spend_${n}`,
        model: spend.model,
        usage: { input: spend.input ?? 0, output: spend.output ?? 0, w5m: 0, w1h: 0, read: 0 },
        cwd,
      })
    }),
    { append: true },
  )
  return path
}

/** `coder-done` with a change in the working tree (a hand-over needs one). */
export function handOver(sb: Sandbox, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  writeFileSync(join(sb.repo, `change-${++responses}.txt`), 'a change\n')
  return sb.cli(['coder-done', '--summary', 'did it', ...args], { env })
}
