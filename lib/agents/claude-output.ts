// `claude -p --output-format json`: the result object, its usage, per-model usage and structured answer.
import type { Usage } from '../run/state.ts'
import { type Loose, type ModelUsage, type ReviewerReply, num, str } from './reply.ts'

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
