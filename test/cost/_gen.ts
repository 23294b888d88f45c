// Small transcript generators for the cost tests (compact JSON lines, as the CLIs write them), a ccusage runner,
// and run states built in memory.
import { spawnSync } from 'node:child_process'
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { RunState } from '../../lib/run/state.ts'
import { ROOT, tempDir } from '../_helpers.ts'
import { runState } from '../_state.ts'

/** Deterministic pseudo-random numbers (mulberry32). */
export function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  }
}

export type Line = Record<string, unknown> | string

export function writeLines(path: string, lines: Line[], { append = false } = {}): void {
  mkdirSync(dirname(path), { recursive: true })
  const text = lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join('')
  if (append) appendFileSync(path, text)
  else writeFileSync(path, text)
}

// ---------- Claude Code

export interface ClaudeUsage {
  input: number
  output: number
  w5m: number
  w1h: number
  read: number
  split?: boolean
  speed?: boolean
}

let uuid = 0
export function claudeUser(sessionId: string, ts: string, text = 'go on'): Record<string, unknown> {
  return {
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    message: { role: 'user', content: text },
    uuid: `u-${++uuid}`,
    timestamp: ts,
    cwd: '/home/alice/src/app',
    sessionId,
    version: '2.1.197',
  }
}

export function claudeAssistant(o: {
  sessionId: string
  ts: string
  id?: string
  requestId?: string
  model: string
  usage: ClaudeUsage
  sidechain?: boolean
  block?: string
  version?: string
  /** Where the session ran (Claude Code records its real working directory on every line). */
  cwd?: string
}): Record<string, unknown> {
  const u = o.usage
  const usage: Record<string, unknown> = {
    input_tokens: u.input,
    cache_creation_input_tokens: u.w5m + u.w1h,
    cache_read_input_tokens: u.read,
    output_tokens: u.output,
  }
  if (u.split !== false) usage.cache_creation = { ephemeral_5m_input_tokens: u.w5m, ephemeral_1h_input_tokens: u.w1h }
  if (u.speed) usage.speed = 'standard'
  const message: Record<string, unknown> = {
    type: 'message',
    role: 'assistant',
    model: o.model,
    content: [{ type: 'text', text: o.block ?? 'Looking at the diff.' }],
    stop_reason: null,
    usage,
  }
  if (o.id !== undefined) message.id = o.id
  const line: Record<string, unknown> = {
    parentUuid: null,
    isSidechain: o.sidechain ?? false,
    type: 'assistant',
    message,
    uuid: `a-${++uuid}`,
    timestamp: o.ts,
    cwd: o.cwd ?? '/home/alice/src/app',
    sessionId: o.sessionId,
    version: o.version ?? '2.1.197',
  }
  if (o.requestId !== undefined) line.requestId = o.requestId
  return line
}

export const CLAUDE_MODELS = [
  'claude-sonnet-4-5-20250929',
  'claude-opus-4-1-20250805',
  'claude-haiku-4-5-20251001',
  'claude-opus-4-5-20251101',
  'claude-3-5-haiku-20241022',
] as const

// ---------- Codex

export interface CodexTotals {
  input: number
  cached: number
  output: number
  reasoning: number
  write?: number
}

const usageObject = (t: CodexTotals) => ({
  input_tokens: t.input,
  cached_input_tokens: t.cached,
  output_tokens: t.output,
  reasoning_output_tokens: t.reasoning,
  total_tokens: t.input + t.output,
  ...(t.write !== undefined ? { cache_write_input_tokens: t.write } : {}),
})

export const codexMeta = (id: string, ts: string, extra: Record<string, unknown> = {}) => ({
  timestamp: ts,
  type: 'session_meta',
  payload: {
    id,
    cwd: '/home/alice/src/app',
    originator: 'codex_cli_rs',
    cli_version: '0.171.0',
    source: 'cli',
    ...extra,
  },
})
export const codexTurn = (model: string, ts: string) => ({
  timestamp: ts,
  type: 'turn_context',
  payload: { cwd: '/home/alice/src/app', sandbox_policy: { type: 'read-only' }, model },
})
export const codexTokenCount = (ts: string, total: CodexTotals | null, last?: CodexTotals) => ({
  timestamp: ts,
  type: 'event_msg',
  payload: {
    type: 'token_count',
    info: total
      ? {
          total_token_usage: usageObject(total),
          ...(last ? { last_token_usage: usageObject(last) } : {}),
          model_context_window: 272000,
        }
      : null,
    rate_limits: { primary: { used_percent: 5, window_minutes: 300, resets_in_seconds: 1000 }, secondary: null },
  },
})
export const codexUsageRecord = (ts: string, t: CodexTotals) => ({
  timestamp: ts,
  type: 'token_usage_record',
  payload: { usage: usageObject(t), turn_token_usage: usageObject(t), thread_token_usage: usageObject(t) },
})
export const codexMessage = (ts: string, text: string) => ({
  timestamp: ts,
  type: 'response_item',
  payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] },
})

export const rolloutPath = (codexHome: string, id: string, day = '2026/01/05') =>
  join(codexHome, 'sessions', day, `rollout-${day.replace(/\//g, '-')}T09-00-00-${id}.jsonl`)

// ---------- ccusage (the oracle)

export function ccusage(args: string[], env: Record<string, string>): any {
  const home = tempDir('pl-ccusage-home-')
  const out = spawnSync(join(ROOT, 'node_modules', '.bin', 'ccusage'), args, {
    cwd: home,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  if (out.status !== 0) throw new Error(`ccusage ${args.join(' ')} failed (${out.status}): ${out.stderr}`)
  return JSON.parse(out.stdout)
}

// ---------- run states

export function makeRun(over: Partial<RunState> = {}): RunState {
  return runState({
    run_id: '20260105-000000-abcdef',
    task: 'demo',
    repo: '/nonexistent/repo',
    base_sha: '0'.repeat(40),
    max_rounds: 5,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  })
}

export function coderRound(n: number, sessionId: string | null, doneAt: string): RunState['rounds'][number] {
  return {
    n,
    coder: {
      summary: `round ${n}`,
      session_id: sessionId,
      diff: null,
      findings_addressed: null,
      over_cap: false,
      over_budget: false,
      started_at: doneAt,
      done_at: doneAt,
    },
    reviewer: null,
  }
}

/** Relative closeness, as the tests require: |a − b| ≤ 1e-9 × max(|total|, tiny). */
export function closeTo(actual: number, expected: number, total = expected): boolean {
  return Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(total), 1e-12)
}
