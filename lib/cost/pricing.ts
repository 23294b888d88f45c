// The embedded price table (USD per million tokens), model-name matching, config overrides, and the cost formulas.
// Values: shared/reference/transcripts-and-pricing.md §5 (what ccusage 20.0.24 uses offline).
import type { ModelPrice } from '../run/config.ts'

/** One model's rates, USD per million tokens. Cache writes of OpenAI models use `cache_write_5m`. */
export interface Rates {
  input: number
  output: number
  cache_write_5m: number
  cache_write_1h: number
  /** Claude cache reads and OpenAI cached input (the same thing: a cache hit). */
  cache_read: number
  /** Claude Sonnet 4 / 4.5: tokens above 200k in one category of one API response cost these instead. */
  above_200k?: { input: number; output: number; cache_write_5m: number; cache_write_1h: number; cache_read: number }
  /** GPT-5.4 / 5.5: a response with more than 272k input tokens costs 2× input and cached input, 1.5× output. */
  long_context_272k?: boolean
  /** Gemini Pro models: a request whose prompt (cached included) is over 200k tokens costs these for all its tokens. */
  prompt_above_200k?: { input: number; output: number; cache_read: number }
}

const claude = (
  input: number,
  output: number,
  cache_write_5m: number,
  cache_write_1h: number,
  cache_read: number,
  extra: Partial<Rates> = {},
): Rates => ({ input, output, cache_write_5m, cache_write_1h, cache_read, ...extra })
const openai = (input: number, cached: number, write: number, output: number, extra: Partial<Rates> = {}): Rates => ({
  input,
  output,
  cache_write_5m: write,
  cache_write_1h: input * 2,
  cache_read: cached,
  ...extra,
})

const OPUS_4 = claude(15, 75, 18.75, 30, 1.5)
const OPUS_45 = claude(5, 25, 6.25, 10, 0.5)
const SONNET_4_TIERED = claude(3, 15, 3.75, 6, 0.3, {
  above_200k: { input: 6, output: 22.5, cache_write_5m: 7.5, cache_write_1h: 12, cache_read: 0.6 },
})
const SONNET = claude(3, 15, 3.75, 6, 0.3)
const GPT5 = openai(1.25, 0.125, 1.5625, 10)
const GPT5_MINI = openai(0.25, 0.025, 0.3125, 2)
const GPT52 = openai(1.75, 0.175, 1.75, 14)
const GPT55 = openai(5, 0.5, 6.25, 30, { long_context_272k: true })
/**
 * Gemini: input, output (thoughts included), cached input (a cache hit). Gemini CLI's implicit caching has no write
 * charge: geminiCost never uses the write rates, kept at ccusage's 1.25× / 2× input so its oracle compares every rate.
 */
const gemini = (input: number, output: number, cached: number, extra: Partial<Rates> = {}): Rates => ({
  input,
  output,
  cache_write_5m: input * 1.25,
  cache_write_1h: input * 2,
  cache_read: cached,
  ...extra,
})
// Base rates: ccusage 20.0.24's offline table (its LiteLLM snapshot; test/cost/pricing.test.ts compares them), the
// same as Google's Gemini API price list (Standard tier, text). Prompts over 200k: Google's list (2.5 Pro 2.50 / 15 /
// 0.25; 3.x Pro preview 4 / 18 / 0.40, also Helicone PR #5590 in shared/reference/landscape-2026-12.md).
const GEMINI_3_PRO = gemini(2, 12, 0.2, { prompt_above_200k: { input: 4, output: 18, cache_read: 0.4 } })

/** Names as the CLIs log them. A dated name is also reachable without its date (see `lookupNames`). */
export const PRICE_TABLE: Readonly<Record<string, Rates>> = {
  'claude-opus-4-20250514': OPUS_4,
  'claude-opus-4-1-20250805': OPUS_4,
  'claude-opus-4-5-20251101': OPUS_45,
  'claude-opus-4-6': OPUS_45,
  'claude-opus-4-7': OPUS_45,
  'claude-opus-4-8': OPUS_45,
  'claude-sonnet-4-20250514': SONNET_4_TIERED,
  'claude-sonnet-4-5-20250929': SONNET_4_TIERED,
  'claude-sonnet-4-6': SONNET,
  'claude-3-7-sonnet-20250219': SONNET,
  'claude-sonnet-5': claude(2, 10, 2.5, 4, 0.2),
  'claude-haiku-4-5-20251001': claude(1, 5, 1.25, 2, 0.1),
  'claude-3-5-haiku-20241022': claude(0.8, 4, 1, 1.6, 0.08),
  'gpt-5': GPT5,
  'gpt-5-codex': GPT5,
  'gpt-5.1': GPT5,
  'gpt-5.1-codex-max': GPT5,
  'gpt-5.1-codex': openai(1.25, 0.125, 1.25, 10),
  'gpt-5-mini': GPT5_MINI,
  'gpt-5.1-codex-mini': GPT5_MINI,
  'gpt-5-nano': openai(0.05, 0.005, 0.0625, 0.4),
  'gpt-5.2': GPT52,
  'gpt-5.2-codex': GPT52,
  'gpt-5.3-codex': openai(1.75, 0.175, 2.1875, 14),
  'gpt-5.4': openai(2.5, 0.25, 3.125, 15, { long_context_272k: true }),
  'gpt-5.4-mini': openai(0.75, 0.075, 0.9375, 4.5),
  'gpt-5.5': GPT55,
  'gpt-5.5-codex': GPT55,
  'gemini-2.5-pro': gemini(1.25, 10, 0.125, { prompt_above_200k: { input: 2.5, output: 15, cache_read: 0.25 } }),
  'gemini-2.5-flash': gemini(0.3, 2.5, 0.03),
  'gemini-2.5-flash-lite': gemini(0.1, 0.4, 0.01),
  'gemini-3-pro-preview': GEMINI_3_PRO,
  'gemini-3.1-pro-preview': GEMINI_3_PRO,
  'gemini-3.1-pro-preview-customtools': GEMINI_3_PRO,
  'gemini-3-flash-preview': gemini(0.5, 3, 0.05),
}

const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/

/**
 * The names a logged model is looked up under, most specific first: the name itself (lower case, without a
 * `provider/` prefix and without `[1m]`-style context suffixes), then without a trailing date
 * (`-20250929` or `-2025-08-07`). Nothing fuzzier: an unknown name stays unknown.
 */
export function lookupNames(model: string): string[] {
  let name = model.trim().toLowerCase()
  name = name.replace(/(\[[^\]]*\])+$/, '')
  name = name.replace(/^[a-z0-9_.-]+\//, '')
  const undated = name.replace(DATE_SUFFIX, '')
  return undated !== name && undated ? [name, undated] : [name]
}

/** A config price: the fields it leaves out follow the usual ratios (writes 1.25× / 2× input, reads 0.1× input). */
export function ratesFromConfig(price: ModelPrice): Rates {
  return {
    input: price.input,
    output: price.output,
    cache_write_5m: price.cache_write_5m ?? price.input * 1.25,
    cache_write_1h: price.cache_write_1h ?? price.input * 2,
    cache_read: price.cache_read ?? price.cached_input ?? price.input * 0.1,
  }
}

export interface PriceBook {
  /** The rates for a logged model name, or null when neither config nor the table knows it. */
  rates(model: string): Rates | null
  /** Names the prices (table, formulas, config overrides): sums kept in a cache are reused only under the same key. */
  key: string
}

/** Change when a cost formula changes: sums kept under the old formulas are then summed again. */
const FORMULAS = 1

/** Config prices (home and repo config merged) win over the embedded table; both are matched by `lookupNames`. */
export function priceBook(overrides: Record<string, ModelPrice> = {}): PriceBook {
  const fromConfig = new Map<string, Rates>()
  for (const [name, price] of Object.entries(overrides)) fromConfig.set(lookupNames(name)[0]!, ratesFromConfig(price))
  const table = new Map<string, Rates>()
  for (const [name, rates] of Object.entries(PRICE_TABLE)) {
    table.set(name, rates)
    const undated = name.replace(DATE_SUFFIX, '')
    if (undated !== name && !(undated in PRICE_TABLE)) table.set(undated, rates)
  }
  const memo = new Map<string, Rates | null>()
  let key: string | undefined
  return {
    // the prices themselves, not a hash of them: a few kB in a cache header, and no chance of a false match
    get key() {
      key ??= JSON.stringify([FORMULAS, PRICE_TABLE, overrides])
      return key
    },
    rates(model: string) {
      const hit = memo.get(model)
      if (hit !== undefined) return hit
      const names = lookupNames(model)
      let found: Rates | null = null
      for (const source of [fromConfig, table]) {
        for (const name of names) {
          found = source.get(name) ?? null
          if (found) break
        }
        if (found) break
      }
      memo.set(model, found)
      return found
    },
  }
}

/** Token counts in the one shape the ledger uses. `input` is uncached input for both vendors. */
export interface Tokens {
  input: number
  output: number
  cache_write_5m: number
  cache_write_1h: number
  cache_read: number
}

export const zeroTokens = (): Tokens => ({ input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0 })

export function addTokens(into: Tokens, more: Tokens): Tokens {
  into.input += more.input
  into.output += more.output
  into.cache_write_5m += more.cache_write_5m
  into.cache_write_1h += more.cache_write_1h
  into.cache_read += more.cache_read
  return into
}

const M = 1_000_000
const TIER = 200_000

/** Claude: `tiered` applies the 200k rule per category (right for one API response, wrong for a sum of several). */
export function claudeCost(t: Tokens, r: Rates, tiered = true): number {
  return claudeCostOf(t.input, t.output, t.cache_write_5m, t.cache_write_1h, t.cache_read, r, tiered)
}

export function claudeCostOf(
  input: number,
  output: number,
  w5m: number,
  w1h: number,
  read: number,
  r: Rates,
  tiered = true,
): number {
  const above = tiered ? r.above_200k : undefined
  if (!above)
    return (
      (input * r.input + output * r.output + w5m * r.cache_write_5m + w1h * r.cache_write_1h + read * r.cache_read) / M
    )
  return (
    (tier(input, r.input, above.input) +
      tier(output, r.output, above.output) +
      tier(w5m, r.cache_write_5m, above.cache_write_5m) +
      tier(w1h, r.cache_write_1h, above.cache_write_1h) +
      tier(read, r.cache_read, above.cache_read)) /
    M
  )
}

const tier = (n: number, base: number, high: number) => (n <= TIER ? n * base : TIER * base + (n - TIER) * high)

/**
 * OpenAI, from Codex's fields: `input` includes cached input and cache writes, `output` includes reasoning.
 * `tiered` applies the 272k long-context rule (per response; not for a thread's sum).
 */
export function codexTokens(input: number, cached: number, write: number, output: number): Tokens {
  const hits = Math.min(cached, input)
  const writes = Math.min(write, input - hits)
  return { input: input - hits - writes, output, cache_write_5m: writes, cache_write_1h: 0, cache_read: hits }
}

export function codexCost(t: Tokens, r: Rates, tiered = true): number {
  const long = tiered && r.long_context_272k && t.input + t.cache_read + t.cache_write_5m > 272_000
  const inFactor = long ? 2 : 1
  const outFactor = long ? 1.5 : 1
  return (
    (t.input * r.input * inFactor +
      t.cache_read * r.cache_read * inFactor +
      t.cache_write_5m * r.cache_write_5m +
      t.output * r.output * outFactor) /
    M
  )
}

export const UNKNOWN_MODEL = '(unknown model)'

/**
 * Gemini, from its usage fields: `prompt` includes `cached`; `output` is candidates plus thoughts (both billed as
 * output). `tiered` applies the >200k-prompt rule (per request; not for a session's sum).
 */
export function geminiTokens(prompt: number, cached: number, output: number): Tokens {
  const hits = Math.min(cached, prompt)
  return { input: prompt - hits, output, cache_write_5m: 0, cache_write_1h: 0, cache_read: hits }
}

export function geminiCost(t: Tokens, r: Rates, tiered = true): number {
  const long = tiered && r.prompt_above_200k && t.input + t.cache_read > TIER ? r.prompt_above_200k : null
  const rates = long ?? r
  return (t.input * rates.input + t.cache_read * rates.cache_read + t.output * rates.output) / M
}
