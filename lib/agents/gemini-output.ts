// `gemini -p … -o json`: one document on stdout, `response` and `session_id`, its tokens in `stats.models`; a failed
// call prints its `error` document on stderr instead (docs/reference/gemini-cli.md). It reports no USD: the price
// book prices the per-model tokens.
import type { Usage } from '../run/state.ts'
import { type Loose, type ModelUsage, type ReviewerReply, num, str } from './reply.ts'

export function parseGeminiJson(stdout: string): ReviewerReply | null {
  const trimmed = stdout.trim()
  if (!trimmed.startsWith('{')) return null
  let parsed: Loose
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    return null
  }
  if (!parsed || typeof parsed !== 'object' || !('session_id' in parsed || 'stats' in parsed)) return null
  if (!('response' in parsed || 'error' in parsed)) return null
  const models = modelUsageOf(parsed.stats?.models)
  const error =
    parsed.error && typeof parsed.error === 'object' ? (str(parsed.error.message) ?? 'gemini reported an error') : null
  return {
    format: 'gemini-json',
    text: error ? null : str(parsed.response),
    error,
    session_id: str(parsed.session_id),
    model: mainModel(models),
    usage: models ? usageOf(models) : null,
    reported_usd: null,
    ...(models ? { model_usage: models } : {}),
  }
}

/**
 * Each model's tokens as per-model usage: the uncached prompt and the tool prompt as input, the cached part as cache
 * reads, thoughts billed as output (the API bills them so). `prompt` includes the cached tokens; `input` does not.
 */
function modelUsageOf(raw: unknown): ModelUsage | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null
  const out: ModelUsage = {}
  for (const [model, entry] of Object.entries(raw as Loose)) {
    const t = entry && typeof entry === 'object' ? (entry as Loose).tokens : null
    if (!t || typeof t !== 'object') continue
    const cached = num(t.cached)
    const prompt = num(t.prompt) || num(t.input) + cached
    out[model] = {
      inputTokens: Math.max(prompt - cached, 0) + num(t.tool),
      cacheReadInputTokens: Math.min(cached, prompt),
      outputTokens: num(t.candidates) + num(t.thoughts),
    }
  }
  return Object.keys(out).length ? out : null
}

/** The call's tokens summed over its models. */
function usageOf(models: ModelUsage): Usage {
  const sum = (key: 'inputTokens' | 'outputTokens' | 'cacheReadInputTokens') =>
    Object.values(models).reduce((total, model) => total + (model[key] ?? 0), 0)
  return {
    input_tokens: sum('inputTokens'),
    output_tokens: sum('outputTokens'),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: sum('cacheReadInputTokens'),
    cache_write_5m_tokens: 0,
    cache_write_1h_tokens: 0,
    cached_input_tokens: 0,
    reasoning_output_tokens: 0,
  }
}

/** The model that did most of the work (the router's classifier call is small): the most output, then input. */
function mainModel(models: ModelUsage | null): string | null {
  const entries = Object.entries(models ?? {})
  entries.sort(
    (a, b) => (b[1].outputTokens ?? 0) - (a[1].outputTokens ?? 0) || (b[1].inputTokens ?? 0) - (a[1].inputTokens ?? 0),
  )
  return entries[0]?.[0] ?? null
}

/** How many of stderr's last `{` lines are tried as the error document (its stack trace comes before it). */
const ERROR_TRIES = 20

/**
 * The error document a failed `-o json` call prints on stderr, after the error's trace (0.61.0 exits with the HTTP
 * status, 400 as 144): its message, and the session it was in. Null when stderr holds none.
 */
export function parseGeminiError(stderr: string): ReviewerReply | null {
  const text = stderr.trimEnd()
  let at = text.length
  for (let tries = 0; tries < ERROR_TRIES && at > 0; tries++) {
    at = text.lastIndexOf('\n{', at - 1)
    const doc = jsonObject(text.slice(at + 1))
    if (doc?.error && typeof doc.error === 'object' && 'session_id' in doc)
      return {
        format: 'gemini-json',
        text: null,
        error: errorMessage(doc.error),
        session_id: str(doc.session_id),
        model: null,
        usage: null,
        reported_usd: null,
      }
    if (at < 0) break
  }
  return null
}

/** The API's own message when the CLI wrapped the API's error document in its message, with its status. */
function errorMessage(error: Loose): string {
  const message = str(error.message) ?? 'gemini reported an error'
  const api = jsonObject(message)?.error
  if (!api || typeof api !== 'object' || !str(api.message)) return message
  const status = [api.code, api.status].filter((part) => typeof part === 'number' || typeof part === 'string')
  return `${api.message}${status.length ? ` (${status.join(' ')})` : ''}`
}

function jsonObject(text: string): Loose | null {
  try {
    const parsed = JSON.parse(text)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null
  } catch {
    return null
  }
}
