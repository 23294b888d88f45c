// What one reviewer call cost: from its structured output (usage at the table's prices), cross-checked against the
// agent's own figure (`total_cost_usd`) and against its transcript when there is one. All three are kept.
import type { ModelPrice } from '../run/config.ts'
import { cacheDir, pairLoopHome } from '../ground/paths.ts'
import type { ReviewerCost, Usage } from '../run/state.ts'
import { dedupeClaude, scanClaude } from './claude.ts'
import { codexItems, scanCodex } from './codex.ts'
import { claudeSessionFiles, codexRolloutForThread } from '../agents/locate.ts'
import {
  UNKNOWN_MODEL,
  claudeCost,
  codexCost,
  codexTokens,
  geminiCost,
  geminiTokens,
  priceBook,
  type PriceBook,
  type Tokens,
} from './pricing.ts'
import { geminiSessionCost } from './gemini.ts'
import { agentOf } from '../agents/registry.ts'
import type { UsageFamily } from '../agents/types.ts'
import type { ReviewerTool } from '../run/vendors.ts'
import type { UsageItem } from './sums.ts'
import { context } from '../ground/context.ts'

/** One model's part of a reviewer call, as `claude -p` reports it per model (`modelUsage`), with its own cost. */
export interface ReviewerModelUsage {
  inputTokens?: number
  outputTokens?: number
  cacheReadInputTokens?: number
  cacheCreationInputTokens?: number
  costUSD?: number
}

export interface ReviewerCall {
  tool: ReviewerTool
  model: string | null
  usage: Usage | null
  reported_usd: number | null
  model_usage?: Record<string, ReviewerModelUsage>
  session_id: string | null
  /** When the call started (ms): a continued session's transcript also holds earlier calls, counted there. */
  since_ms?: number | null
}

export interface CostOptions {
  /** The command's config prices (config `pricing`), over the embedded table. */
  pricing: Record<string, ModelPrice>
  env?: NodeJS.ProcessEnv
}

/** Whose usage semantics a call's numbers follow: its CLI's (lib/agents/), or for a custom command the format it printed. */
export function usageFamily(
  call: Pick<ReviewerCall, 'tool' | 'model' | 'usage' | 'reported_usd' | 'model_usage'>,
): UsageFamily {
  if (call.tool !== 'custom') return agentOf(call.tool).usage
  if (call.model && /^gemini/i.test(call.model)) return 'google'
  if (call.model_usage && Object.keys(call.model_usage).length) return 'anthropic'
  if (call.reported_usd !== null && call.reported_usd !== undefined) return 'anthropic'
  if ((call.usage?.cached_input_tokens ?? 0) > 0) return 'openai'
  if (call.model && /^(gpt-|o\d|codex)/i.test(call.model)) return 'openai'
  return 'anthropic'
}

/** A recorded Usage in the ledger's token shape. Claude writes without a known 5m/1h split count as 5-minute writes. */
export function usageTokens(family: UsageFamily, u: Usage): Tokens {
  if (family === 'google')
    return geminiTokens(
      u.input_tokens + (u.cache_read_input_tokens ?? 0),
      u.cache_read_input_tokens ?? 0,
      u.output_tokens,
    )
  if (family === 'openai')
    return codexTokens(u.input_tokens, u.cached_input_tokens ?? 0, u.cache_creation_input_tokens ?? 0, u.output_tokens)
  const h1 = u.cache_write_1h_tokens ?? 0
  const m5 = Math.max(u.cache_write_5m_tokens ?? 0, (u.cache_creation_input_tokens ?? 0) - h1)
  return {
    input: u.input_tokens,
    output: u.output_tokens,
    cache_write_5m: m5,
    cache_write_1h: h1,
    cache_read: u.cache_read_input_tokens ?? 0,
  }
}

interface Priced {
  usd: number
  models: Record<string, number>
  unpriced: string[]
  lastModel: string | null
  entries: number
}

export function costOfReviewerCall(call: ReviewerCall, options: CostOptions): ReviewerCost {
  const env = options.env ?? context().env
  const prices = priceBook(options.pricing)
  const family = usageFamily(call)
  const since = call.since_ms ?? Number.NEGATIVE_INFINITY
  const transcript = call.session_id ? transcriptCost(family, call.session_id, prices, env, since) : null
  const reported =
    typeof call.reported_usd === 'number' && Number.isFinite(call.reported_usd) && call.reported_usd >= 0
      ? call.reported_usd
      : null

  const fromUsage = USAGE_COST[family](call, prices, transcript)
  const base = { transcript_usd: transcript?.entries ? transcript.usd : null, reported_usd: reported }
  if (fromUsage) {
    if (fromUsage.unpriced.length && reported !== null) {
      // our table lacks a model the agent priced itself: its own figure beats counting that model as $0
      return {
        usd: reported,
        source: 'reported',
        models: fromUsage.models,
        unpriced_models: fromUsage.unpriced,
        ...base,
      }
    }
    return {
      usd: fromUsage.usd,
      source: 'usage',
      models: fromUsage.models,
      unpriced_models: fromUsage.unpriced,
      ...base,
    }
  }
  if (reported !== null) return { usd: reported, source: 'reported', models: {}, unpriced_models: [], ...base }
  if (transcript?.entries)
    return {
      usd: transcript.usd,
      source: 'transcript',
      models: transcript.models,
      unpriced_models: transcript.unpriced,
      ...base,
    }
  return { usd: null, source: 'none', models: {}, unpriced_models: [], ...base }
}

function claudeUsageCost(call: ReviewerCall, prices: PriceBook, transcript: Priced | null): Priced | null {
  const perModel = call.model_usage && Object.keys(call.model_usage).length ? call.model_usage : null
  const rows: Array<[string, Tokens]> = []
  if (perModel) {
    const names = Object.keys(perModel)
    for (const name of names) {
      const mu = perModel[name]!
      const creation = n(mu.cacheCreationInputTokens)
      // the per-model figures carry no 5m/1h split; the call's usage does, and applies when it is the only model
      const splitKnown =
        names.length === 1 &&
        call.usage &&
        (call.usage.cache_write_5m_tokens ?? 0) + (call.usage.cache_write_1h_tokens ?? 0) === creation &&
        creation > 0
      const h1 = splitKnown ? (call.usage!.cache_write_1h_tokens ?? 0) : 0
      rows.push([
        name,
        {
          input: n(mu.inputTokens),
          output: n(mu.outputTokens),
          cache_write_5m: creation - h1,
          cache_write_1h: h1,
          cache_read: n(mu.cacheReadInputTokens),
        },
      ])
    }
  } else if (call.usage) {
    rows.push([call.model ?? transcript?.lastModel ?? UNKNOWN_MODEL, usageTokens('anthropic', call.usage)])
  } else return null
  // one sum over a call's several API responses: the per-response 200k rule cannot be applied to it
  return priceRows(rows, prices, (t, r) => claudeCost(t, r, false))
}

function codexUsageCost(call: ReviewerCall, prices: PriceBook, transcript: Priced | null): Priced | null {
  if (!call.usage) return null
  const model = call.model ?? transcript?.lastModel ?? UNKNOWN_MODEL
  return priceRows([[model, usageTokens('openai', call.usage)]], prices, (t, r) => codexCost(t, r, false))
}

/** A call's usage priced by its family's rules (a sum over the call's responses: no per-response 200k tier). */
const USAGE_COST: Record<
  UsageFamily,
  (call: ReviewerCall, prices: PriceBook, transcript: Priced | null) => Priced | null
> = {
  anthropic: claudeUsageCost,
  openai: codexUsageCost,
  google: geminiUsageCost,
}

/** Gemini's per-model tokens (lib/agents/gemini-output.ts), priced at each model's rates. */
function geminiUsageCost(call: ReviewerCall, prices: PriceBook): Priced | null {
  const perModel = Object.entries(call.model_usage ?? {})
  const rows: Array<[string, Tokens]> = perModel.length
    ? perModel.map(([model, mu]) => [
        model,
        geminiTokens(n(mu.inputTokens) + n(mu.cacheReadInputTokens), n(mu.cacheReadInputTokens), n(mu.outputTokens)),
      ])
    : call.usage
      ? [[call.model ?? UNKNOWN_MODEL, usageTokens('google', call.usage)]]
      : []
  return rows.length ? priceRows(rows, prices, (t, r) => geminiCost(t, r, false)) : null
}

function priceRows(
  rows: Array<[string, Tokens]>,
  prices: PriceBook,
  cost: (t: Tokens, r: NonNullable<ReturnType<PriceBook['rates']>>) => number,
): Priced {
  const out: Priced = { usd: 0, models: {}, unpriced: [], lastModel: null, entries: rows.length }
  for (const [model, tokens] of rows) {
    const rates = model === UNKNOWN_MODEL ? null : prices.rates(model)
    const usd = rates ? cost(tokens, rates) : 0
    if (!rates) out.unpriced.push(model)
    out.models[model] = (out.models[model] ?? 0) + usd
    out.usd += usd
  }
  return out
}

const n = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)

/**
 * The cost the call's own transcript shows (Claude session with its subagents, the Codex rollout of the thread, the
 * Gemini session), from `since` on: a continued session's earlier calls were counted with them.
 */
function transcriptCost(
  family: UsageFamily,
  sessionId: string,
  prices: PriceBook,
  env: NodeJS.ProcessEnv,
  since: number,
): Priced | null {
  const cache = cacheDir(pairLoopHome(env))
  let items: UsageItem[]
  if (family === 'google') {
    const session = geminiSessionCost(sessionId, prices, { env, since })
    return session && { ...session, lastModel: Object.keys(session.models).at(-1) ?? null }
  }
  if (family === 'anthropic') {
    const files = claudeSessionFiles(sessionId, { env })
    if (!files.main) return null
    items = dedupeClaude(
      [files.main, ...files.subagents].map((path) => scanClaude(path, cache)),
      prices,
    )
  } else {
    const path = codexRolloutForThread(sessionId, env)
    if (!path) return null
    items = codexItems(scanCodex(path, cache, env), prices)
  }
  items = items.filter((item) => !(item.ts < since)) // only what this call added, never a continued history again
  const out: Priced = { usd: 0, models: {}, unpriced: [], lastModel: null, entries: items.length }
  for (const item of items) {
    out.usd += item.usd
    out.models[item.model] = (out.models[item.model] ?? 0) + item.usd
    if (!item.priced && !out.unpriced.includes(item.model)) out.unpriced.push(item.model)
    out.lastModel = item.model
  }
  return out
}
