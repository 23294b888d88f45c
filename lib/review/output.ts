// Reading what a reviewer printed: Claude's JSON result, Codex's JSON lines, or plain text.
import type { Usage } from '../run/state.ts'
import { stripControl } from '../ground/text.ts'

/** Parsed JSON from a reviewer CLI: read field by field, each value checked where it is used. */
// biome-ignore lint/suspicious/noExplicitAny: untrusted JSON is probed key by key; every use checks the type
type Loose = Record<string, any>

export type ModelUsage = Record<
  string,
  {
    inputTokens?: number
    outputTokens?: number
    cacheReadInputTokens?: number
    cacheCreationInputTokens?: number
    costUSD?: number
  }
>

export interface ReviewerReply {
  format: 'claude-json' | 'codex-jsonl' | 'text'
  /** The review text, or null when there was none. */
  text: string | null
  /** The reviewer's own error (API, auth, quota, turn failure), or null. */
  error: string | null
  session_id: string | null
  model: string | null
  usage: Usage | null
  reported_usd: number | null
  model_usage?: ModelUsage
  /** Claude's `structured_output` (the object a `--json-schema` call answered with), unchecked; absent without one. */
  structured?: unknown
}

const num = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0
const str = (value: unknown) => (typeof value === 'string' && value ? value : null)

export function parseReviewerOutput(stdout: string, lastMessage?: string | null): ReviewerReply {
  return (
    parseClaudeJson(stdout) ??
    parseCodexJsonl(stdout, lastMessage) ?? {
      format: 'text',
      text: stdout.trim() ? stdout : null,
      error: null,
      session_id: null,
      model: null,
      usage: null,
      reported_usd: null,
    }
  )
}

/** `claude -p --output-format json`: one result object (an array of messages ending with it under --verbose). */
export function parseClaudeJson(stdout: string): ReviewerReply | null {
  const trimmed = stdout.trim()
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    return null
  }
  const result = (Array.isArray(parsed) ? parsed.at(-1) : parsed) as Loose | undefined
  if (!result || typeof result !== 'object' || result.type !== 'result') return null
  const modelUsage = modelUsageOf(result.modelUsage)
  const usage = result.usage && typeof result.usage === 'object' ? claudeUsage(result.usage) : null
  const text = str(result.result)
  const isError = result.is_error === true
  const errors = Array.isArray(result.errors)
    ? result.errors.filter((e: unknown) => typeof e === 'string').join('; ')
    : ''
  return {
    format: 'claude-json',
    text: isError ? null : text,
    error: isError ? text || errors || `claude reported an error (${result.subtype ?? 'unknown'})` : null,
    session_id: str(result.session_id),
    model: mainModel(modelUsage),
    usage,
    reported_usd:
      typeof result.total_cost_usd === 'number'
        ? result.total_cost_usd
        : typeof result.cost_usd === 'number'
          ? result.cost_usd
          : null,
    model_usage: modelUsage,
    ...(!isError && result.structured_output !== undefined ? { structured: result.structured_output } : {}),
  }
}

/** `modelUsage` as an object of per-model objects: anything else in it (null, numbers) is dropped, not dereferenced. */
function modelUsageOf(raw: unknown): ModelUsage | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined
  return Object.fromEntries(
    Object.entries(raw).filter(([, value]) => value !== null && typeof value === 'object' && !Array.isArray(value)),
  )
}

function claudeUsage(raw: Loose): Usage {
  const split = raw.cache_creation && typeof raw.cache_creation === 'object' ? raw.cache_creation : null
  const creation = num(raw.cache_creation_input_tokens)
  return {
    input_tokens: num(raw.input_tokens),
    output_tokens: num(raw.output_tokens),
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: num(raw.cache_read_input_tokens),
    cache_write_5m_tokens: split ? num(split.ephemeral_5m_input_tokens) : creation,
    cache_write_1h_tokens: split ? num(split.ephemeral_1h_input_tokens) : 0,
    cached_input_tokens: 0,
    reasoning_output_tokens: 0,
  }
}

/** The model that did the work: the one with the highest cost (helpers such as Haiku also appear), `[1m]`-style suffix kept. */
function mainModel(modelUsage: ModelUsage | undefined): string | null {
  if (!modelUsage) return null
  const entries = Object.entries(modelUsage)
  if (entries.length === 0) return null
  const figure = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0) // a string or object here is noise, not a number
  entries.sort(
    (a, b) => figure(b[1].costUSD) - figure(a[1].costUSD) || figure(b[1].outputTokens) - figure(a[1].outputTokens),
  )
  return entries[0]![0]
}

/** `codex exec --json`: thread.started, items, turn.completed with usage, or error / turn.failed. */
export function parseCodexJsonl(stdout: string, lastMessage?: string | null): ReviewerReply | null {
  const events: Array<Loose> = []
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim()
    if (!trimmed.startsWith('{')) continue
    try {
      const event = JSON.parse(trimmed)
      if (event && typeof event === 'object' && typeof event.type === 'string') events.push(event)
    } catch {}
  }
  const known = new Set([
    'thread.started',
    'turn.started',
    'turn.completed',
    'turn.failed',
    'item.completed',
    'item.started',
    'item.updated',
    'error',
  ])
  if (!events.some((e) => known.has(e.type) && e.type !== 'error')) return null
  let threadId: string | null = null
  let text: string | null = null
  let usage: Usage | null = null
  let failure: string | null = null
  let completed = false
  for (const event of events) {
    if (event.type === 'thread.started') threadId = str(event.thread_id)
    if (event.type === 'item.completed' && event.item?.type === 'agent_message') text = str(event.item.text) ?? text
    if (event.type === 'turn.completed') {
      completed = true
      if (event.usage && typeof event.usage === 'object') usage = codexUsage(event.usage)
    }
    if (event.type === 'turn.failed') failure = str(event.error?.message) ?? 'codex reported turn.failed'
  }
  if (!completed && !failure) {
    const lastError = events.filter((e) => e.type === 'error').at(-1)
    if (lastError) failure = str(lastError.message) ?? 'codex reported an error'
  }
  const final = text ?? (lastMessage?.trim() ? lastMessage : null)
  return {
    format: 'codex-jsonl',
    text: failure ? null : final,
    error: failure ?? (completed ? null : 'codex ended without turn.completed'),
    session_id: threadId,
    model: null,
    usage,
    reported_usd: null,
  }
}

function codexUsage(raw: Loose): Usage {
  return {
    input_tokens: num(raw.input_tokens),
    output_tokens: num(raw.output_tokens),
    cache_creation_input_tokens: num(raw.cache_write_input_tokens),
    cache_read_input_tokens: 0,
    cache_write_5m_tokens: 0,
    cache_write_1h_tokens: 0,
    cached_input_tokens: num(raw.cached_input_tokens),
    reasoning_output_tokens: num(raw.reasoning_output_tokens),
  }
}

const TROUBLE =
  /(usage limit|rate[ _-]?limit|quota|insufficient[_ ]quota|\b429\b|\b401\b|\b403\b|unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|authentication[_ ]error|not logged in|please (log|sign) in|overloaded|\b529\b|credit balance)/i

/** A line of the reviewer's output that reads like an API, auth or quota failure (checked only when no verdict came). */
export function troubleLine(text: string): string | null {
  for (const line of stripControl(text).split('\n')) if (TROUBLE.test(line)) return line.trim().slice(0, 500)
  return null
}

/** Bytes that are not a review at all: invalid UTF-8 or NUL bytes. */
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return true
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return false
  } catch {
    return true
  }
}
