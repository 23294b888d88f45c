// Prompt-caching billing for the mock model API (mock-server.mjs, MOCK_BILL_CACHE=1): the input and output tokens of a
// request counted from its body and reply, its input split into cache reads, cache writes and fresh input the way the
// providers bill them. Deliberately simple, and stated so a figure can be checked by hand:
//
//   Tokens     ceil(bytes / 4) of UTF-8 text (a stated stand-in for a real tokenizer).
//   The prompt a request's "blocks" in the order the provider reads them, each serialized as JSON with any
//              `cache_control` removed (it moves from request to request and is no part of the prompt):
//                Anthropic  each tool, then each system block (a string system: one block), then each content block
//                           of each message, as {role, block} (a string content: one text block)
//                OpenAI     each tool, the structured-output format (`text.format`, when asked), `instructions`,
//                           then each input item without its `id` (Codex names each item afresh in every session;
//                           the id is not text the model reads)
//              A prefix is a whole number of blocks; its tokens are ceil(its bytes / 4), its bytes the sum of its
//              blocks'. The cache is per (api, model, prefix): a prefix is found again only when every block of it is
//              byte for byte the same, in the same order.
//   Warm       a cached prefix is warm for MOCK_CACHE_TTL_S seconds (default 300, the providers' 5 minutes; decimals
//              allowed) after it was last written or read; a read refreshes it (both providers do). An Anthropic
//              breakpoint with `ttl: "1h"` keeps its prefix warm for an hour, or the window when that is longer.
//   Anthropic  caching is opt-in: a request with no `cache_control` reads and writes nothing (all `input_tokens`).
//              Otherwise the longest warm prefix ending at or before its last breakpoint is read
//              (`cache_read_input_tokens`); the blocks after it up to the last breakpoint are written
//              (`cache_creation_input_tokens`, split 5m / 1h by the ttl of the breakpoint that ends each stretch);
//              what follows the last breakpoint is `input_tokens`. The prefix at each breakpoint is then warm. (Claude
//              Code marks its system blocks and the last message's last block, so nearly all fresh input is a write.)
//              Not modelled: the 20-block look-back limit and the minimum cacheable length (1,024 tokens).
//   OpenAI     caching is automatic: the longest warm prefix is `input_tokens_details.cached_tokens`, within
//              `input_tokens` (the whole prompt); no cache writes are billed (`cache_write_tokens` 0); every prefix of
//              the request is then warm. Not modelled: the 1,024-token minimum, 128-token steps, `prompt_cache_key`
//              routing (a prefix is found whichever key sent it: fresh sessions of one CLI share their system prompt).
//   Output     ceil(bytes / 4) of what the reply carries: its texts and any tool call's input (as JSON).
import { createHash } from 'node:crypto'

export const CACHE_TTL_S = 300
const HOUR_S = 3600

/** ceil(bytes / 4): the mock's tokenizer. */
export function tokensOf(bytes) {
  return Math.ceil(bytes / 4)
}

/** A block as the cache sees it: its JSON without `cache_control`. */
function serialize(block) {
  return JSON.stringify(block, (key, value) => (key === 'cache_control' ? undefined : value))
}

/** A block of the prompt: its text, and the ttl of its breakpoint ('5m' | '1h') or null when it is not one. */
function block(value, holder = value) {
  const control = holder && typeof holder === 'object' ? holder.cache_control : undefined
  const breakpoint = control ? (control.ttl === '1h' ? '1h' : '5m') : null
  return { text: serialize(value), breakpoint }
}

const list = (value) => (Array.isArray(value) ? value : [])

/** An Anthropic Messages request as blocks, in the provider's order: tools, system, messages. */
export function anthropicBlocks(body) {
  const system =
    typeof body?.system === 'string'
      ? [block({ type: 'text', text: body.system })]
      : list(body?.system).map((b) => block(b))
  const messages = list(body?.messages).flatMap((message) => {
    const content =
      typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : list(message?.content)
    return content.map((part) => block({ role: message.role, block: part }, part))
  })
  return [...list(body?.tools).map((tool) => block(tool)), ...system, ...messages]
}

/** An OpenAI Responses request as blocks: tools, the output format, instructions, input items. */
export function openaiBlocks(body) {
  const format = body?.text?.format ? [block({ format: body.text.format })] : []
  const instructions = body?.instructions ? [block({ instructions: body.instructions })] : []
  const input = typeof body?.input === 'string' ? [{ role: 'user', content: body.input }] : list(body?.input)
  return [
    ...list(body?.tools).map((tool) => block(tool)),
    ...format,
    ...instructions,
    ...input.map((item) => block(withoutId(item))),
  ]
}

/** An input item without its `id`. */
function withoutId(item) {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return item
  const { id: _id, ...rest } = item
  return rest
}

/** Each prefix's key (chained hashes) and token count; index i is the prefix of the first i blocks. */
function prefixes(blocks) {
  const keys = ['']
  const tokens = [0]
  let hash = ''
  let bytes = 0
  for (const { text } of blocks) {
    hash = createHash('sha256').update(hash).update('\0').update(text).digest('hex')
    bytes += Buffer.byteLength(text)
    keys.push(hash)
    tokens.push(tokensOf(bytes))
  }
  return { keys, tokens }
}

/**
 * A cache of prefixes for one mock server. `bill(api, model, body)` returns the input side of the request's usage:
 * {input, cache_read, cache_write_5m, cache_write_1h, uncached} — `input` the whole prompt, `uncached` what is neither
 * read nor written — and warms what the request leaves in the cache.
 */
export function createCacheBilling({ ttlS = CACHE_TTL_S, now = () => Date.now() } = {}) {
  const warmUntil = new Map()
  const keyOf = (api, model, prefix) => `${api}\0${model ?? ''}\0${prefix}`
  const isWarm = (key) => (warmUntil.get(key) ?? Number.NEGATIVE_INFINITY) > now()
  const warm = (key, seconds) => warmUntil.set(key, Math.max(warmUntil.get(key) ?? 0, now() + seconds * 1000))

  /** The longest warm prefix among the first `upTo` blocks (0 when none). */
  function longestWarm(api, model, keys, upTo) {
    for (let i = upTo; i > 0; i--) if (isWarm(keyOf(api, model, keys[i]))) return i
    return 0
  }

  function billAnthropic(model, body) {
    const blocks = anthropicBlocks(body)
    const { keys, tokens } = prefixes(blocks)
    const total = tokens[blocks.length]
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [{ end: i + 1, ttl: b.breakpoint }] : []))
    const last = breakpoints.at(-1)?.end ?? 0
    if (!last) return { input: total, cache_read: 0, cache_write_5m: 0, cache_write_1h: 0, uncached: total }
    const hit = longestWarm('anthropic', model, keys, last)
    if (hit) warm(keyOf('anthropic', model, keys[hit]), ttlS)
    const written = { '5m': 0, '1h': 0 }
    let from = hit
    for (const { end, ttl } of breakpoints) {
      if (end > from) written[ttl] += tokens[end] - tokens[from]
      from = Math.max(from, end)
      warm(keyOf('anthropic', model, keys[end]), ttl === '1h' ? Math.max(HOUR_S, ttlS) : ttlS)
    }
    return {
      input: total,
      cache_read: tokens[hit],
      cache_write_5m: written['5m'],
      cache_write_1h: written['1h'],
      uncached: total - tokens[last],
    }
  }

  function billOpenai(model, body) {
    const blocks = openaiBlocks(body)
    const { keys, tokens } = prefixes(blocks)
    const hit = longestWarm('openai', model, keys, blocks.length)
    for (let i = 1; i <= blocks.length; i++) warm(keyOf('openai', model, keys[i]), ttlS)
    const total = tokens[blocks.length]
    return {
      input: total,
      cache_read: tokens[hit],
      cache_write_5m: 0,
      cache_write_1h: 0,
      uncached: total - tokens[hit],
    }
  }

  return {
    bill: (api, model, body) =>
      api === 'anthropic' ? billAnthropic(model, body) : api === 'openai' ? billOpenai(model, body) : null,
  }
}

/** The output tokens of a reply: the texts it carries (a tool call's input as its JSON text). */
export function outputTokens(texts) {
  return tokensOf(texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0))
}

/** Anthropic usage fields for a billed request (overrides of anthropicUsage in mock-server.mjs). */
export function anthropicBilled(bill, output) {
  return {
    input_tokens: bill.uncached,
    cache_creation_input_tokens: bill.cache_write_5m + bill.cache_write_1h,
    cache_read_input_tokens: bill.cache_read,
    output_tokens: output,
    cache_creation: { ephemeral_5m_input_tokens: bill.cache_write_5m, ephemeral_1h_input_tokens: bill.cache_write_1h },
  }
}

/** Responses usage fields for a billed request (overrides of openaiUsage in mock-server.mjs): cached ⊂ input. */
export function openaiBilled(bill, output) {
  return {
    input_tokens: bill.input,
    cached_tokens: bill.cache_read,
    cache_write_tokens: 0,
    output_tokens: output,
    reasoning_tokens: 0,
  }
}
