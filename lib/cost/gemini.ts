// What a Gemini CLI call cost. It reports no USD: its tokens are priced with the table — from the `-o json` answer's
// `stats.models` (every request of the call, side calls included) and, as a cross-check, from its session file
// (the chat's own responses, each priced alone so the >200k-prompt rule applies per request).
import type { ModelPrice } from '../run/config.ts'
import type { ReviewerCost } from '../run/state.ts'
import { context } from '../ground/context.ts'
import { geminiSessionFiles, readGeminiSession, type GeminiResponse } from './gemini-transcript.ts'
import { geminiCost, geminiTokens, priceBook, type PriceBook, type Tokens } from './pricing.ts'

/** One model's counts in `stats.models[<model>].tokens` of `gemini -o json` (docs/reference/gemini-cli.md). */
export interface GeminiStatsTokens {
  /** prompt − cached */
  input?: number
  /** promptTokenCount: cached included */
  prompt?: number
  candidates?: number
  cached?: number
  thoughts?: number
  /** toolUsePromptTokenCount */
  tool?: number
  total?: number
  /** `-o stream-json`'s names: input_tokens = prompt, output_tokens = candidates (it leaves thoughts out). */
  input_tokens?: number
  output_tokens?: number
}

/** `stats` of `gemini -o json`: only what this call added, also when it resumed a session. */
export interface GeminiStats {
  models?: Record<string, { tokens?: GeminiStatsTokens } | undefined>
}

const n = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)

/** A model's counts in the ledger's shape: uncached prompt and tool prompt as input, thoughts billed as output. */
export function geminiStatsTokens(t: GeminiStatsTokens): Tokens {
  const prompt = n(t.prompt) || n(t.input_tokens) || n(t.input) + n(t.cached)
  const tokens = geminiTokens(prompt, n(t.cached), (n(t.candidates) || n(t.output_tokens)) + n(t.thoughts))
  tokens.input += n(t.tool)
  return tokens
}

/** The same for one recorded response. */
export function geminiResponseTokens(r: GeminiResponse): Tokens {
  const tokens = geminiTokens(r.prompt, r.cached, r.candidates + r.thoughts)
  tokens.input += r.tool
  return tokens
}

export interface GeminiPriced {
  usd: number
  models: Record<string, number>
  unpriced: string[]
  /** How many rows were priced (models of the stats, responses of the session). */
  entries: number
}

function price(rows: Array<[string, Tokens]>, prices: PriceBook, tiered: boolean): GeminiPriced {
  const out: GeminiPriced = { usd: 0, models: {}, unpriced: [], entries: rows.length }
  for (const [model, tokens] of rows) {
    const rates = prices.rates(model)
    const usd = rates ? geminiCost(tokens, rates, tiered) : 0
    if (!rates && !out.unpriced.includes(model)) out.unpriced.push(model)
    out.models[model] = (out.models[model] ?? 0) + usd
    out.usd += usd
  }
  return out
}

/** The stats' cost: each model's sum at its rates (a sum of requests: the per-request 200k rule cannot apply). */
export function geminiStatsCost(stats: GeminiStats | null | undefined, prices: PriceBook): GeminiPriced | null {
  const models = stats?.models && typeof stats.models === 'object' ? Object.entries(stats.models) : []
  const rows = models.flatMap(
    ([model, entry]): Array<[string, Tokens]> =>
      entry?.tokens && typeof entry.tokens === 'object' ? [[model, geminiStatsTokens(entry.tokens)]] : [],
  )
  return rows.length ? price(rows, prices, false) : null
}

/** The session file's cost (its subagents' too), each response on its own; `since` drops responses before it (ms). */
export function geminiSessionCost(
  sessionId: string,
  prices: PriceBook,
  { env = context().env, since = Number.NEGATIVE_INFINITY }: { env?: NodeJS.ProcessEnv; since?: number } = {},
): GeminiPriced | null {
  const { files, subagents } = geminiSessionFiles(sessionId, env)
  if (!files.length) return null
  // a response copied into another file of the session (a resume's replay) counts once, by its id
  const byId = new Map([...files, ...subagents].flatMap((path) => readGeminiSession(path)).map((r) => [r.id, r]))
  const responses = [...byId.values()].filter((r) => !(r.timestamp < since))
  return price(
    responses.map((r) => [r.model ?? '(unknown model)', geminiResponseTokens(r)]),
    prices,
    true,
  )
}

export interface GeminiCall {
  /** `stats` of the call's `-o json` answer, or null when there was none (a crash, a timeout). */
  stats: GeminiStats | null
  session_id: string | null
  /** When the call started (ms): a resumed session file also holds earlier calls' responses. */
  started_ms?: number
}

/** A Gemini reviewer's (or coder's) call, as the ledger records a reviewer's: stats first, the session file beside. */
export function costOfGeminiCall(
  call: GeminiCall,
  { pricing, env = context().env }: { pricing: Record<string, ModelPrice>; env?: NodeJS.ProcessEnv },
): ReviewerCost {
  const prices = priceBook(pricing)
  const session = call.session_id
    ? geminiSessionCost(call.session_id, prices, { env, since: call.started_ms ?? Number.NEGATIVE_INFINITY })
    : null
  const transcript_usd = session?.entries ? session.usd : null
  const stats = geminiStatsCost(call.stats, prices)
  const from = stats ?? (session?.entries ? session : null)
  if (!from) return { usd: null, source: 'none', models: {}, unpriced_models: [], transcript_usd, reported_usd: null }
  return {
    usd: from.usd,
    source: stats ? 'usage' : 'transcript',
    models: from.models,
    unpriced_models: from.unpriced,
    transcript_usd,
    reported_usd: null,
  }
}
