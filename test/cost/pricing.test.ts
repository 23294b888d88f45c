import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PRICE_TABLE, claudeCost, codexCost, codexTokens, lookupNames, priceBook } from '../../lib/cost/pricing.ts'
import { tempDir } from '../_helpers.ts'
import {
  type ClaudeUsage,
  type CodexTotals,
  ccusage,
  claudeAssistant,
  closeTo,
  codexMeta,
  codexTokenCount,
  codexTurn,
  rolloutPath,
  writeLines,
} from './_gen.ts'

const tokens = (input: number, output: number, w5m = 0, w1h = 0, read = 0) => ({
  input,
  output,
  cache_write_5m: w5m,
  cache_write_1h: w1h,
  cache_read: read,
})

// The oracle: ccusage 20.0.24's own prices, read from its output (offline) for transcripts with known token counts.
// Each token category gets a session of its own (one response per model, 100k tokens: under every tier), so each
// rate of each model is checked on its own.
const N = 100_000
const CLAUDE_MODELS = Object.keys(PRICE_TABLE).filter((model) => model.startsWith('claude-'))
const OPENAI_MODELS = Object.keys(PRICE_TABLE).filter((model) => !model.startsWith('claude-'))

const CLAUDE_CATEGORIES = {
  input: { input: N, output: 0, w5m: 0, w1h: 0, read: 0 },
  output: { input: 0, output: N, w5m: 0, w1h: 0, read: 0 },
  cache_write_5m: { input: 0, output: 0, w5m: N, w1h: 0, read: 0 },
  cache_write_1h: { input: 0, output: 0, w5m: 0, w1h: N, read: 0 },
  cache_read: { input: 0, output: 0, w5m: 0, w1h: 0, read: N },
} satisfies Record<string, ClaudeUsage>

/** Codex fields: input includes cached input and cache writes. */
const CODEX_CATEGORIES = {
  input: { input: N, cached: 0, write: 0, output: 0, reasoning: 0 },
  cached_input: { input: N, cached: N, write: 0, output: 0, reasoning: 0 },
  cache_write: { input: N, cached: 0, write: N, output: 0, reasoning: 0 },
  output: { input: 0, cached: 0, write: 0, output: N, reasoning: 0 },
} satisfies Record<string, CodexTotals>

const sessionId = (kind: number, category: number) =>
  `${kind}${String(category).padStart(7, '0')}-0000-4000-8000-${'0'.repeat(12)}`
const threadId = (model: number, category: number) =>
  `01a2b3c4-0000-7000-8000-${String(model).padStart(6, '0')}${String(category).padStart(6, '0')}`

/** What ccusage charges, per Claude model and category, and per OpenAI model and category. */
function ccusagePrices() {
  const root = tempDir('pl-prices-')
  const claudeDir = join(root, 'claude')
  Object.values(CLAUDE_CATEGORIES).forEach((usage, c) => {
    const sid = sessionId(1, c)
    const lines = CLAUDE_MODELS.map((model, m) =>
      claudeAssistant({
        sessionId: sid,
        ts: new Date(Date.UTC(2026, 0, 5, 9, 0, m)).toISOString(),
        id: `msg_${c}_${m}`,
        requestId: `req_${c}_${m}`,
        model,
        usage,
      }),
    )
    writeLines(join(claudeDir, 'projects', '-home-alice-src-app', `${sid}.jsonl`), lines)
  })
  const codexHome = join(root, 'codex')
  Object.values(CODEX_CATEGORIES).forEach((usage, c) => {
    OPENAI_MODELS.forEach((model, m) => {
      const id = threadId(m, c)
      const ts = '2026-01-05T09:00:00.000Z'
      writeLines(rolloutPath(codexHome, id), [
        codexMeta(id, ts),
        codexTurn(model, ts),
        codexTokenCount(ts, usage, usage),
      ])
    })
  })
  const claude = ccusage(['claude', 'session', '--json', '--offline', '--mode', 'calculate'], {
    CLAUDE_CONFIG_DIR: claudeDir,
  })
  const codex = ccusage(['codex', 'session', '--json', '--offline'], { CODEX_HOME: codexHome })
  const claudeCosts = new Map<string, number>() // "model category" → USD
  for (const session of claude.sessions as any[]) {
    const category = Object.keys(CLAUDE_CATEGORIES)[Number(session.sessionId.slice(1, 8))]!
    for (const row of session.modelBreakdowns) claudeCosts.set(`${row.modelName} ${category}`, row.cost)
  }
  const codexCosts = new Map<string, number>()
  for (const session of codex.sessions as any[]) {
    const tail = String(session.sessionFile ?? session.sessionId).match(/(\d{6})(\d{6})\.jsonl$|(\d{6})(\d{6})$/)!
    const [m, c] = [Number(tail[1] ?? tail[3]), Number(tail[2] ?? tail[4])]
    codexCosts.set(`${OPENAI_MODELS[m]} ${Object.keys(CODEX_CATEGORIES)[c]}`, session.costUSD)
  }
  return { claude: claudeCosts, codex: codexCosts }
}

describe('the price table equals ccusage 20.0.24 (offline), model by model and rate by rate', () => {
  let oracle: ReturnType<typeof ccusagePrices>
  beforeAll(() => {
    oracle = ccusagePrices()
  }, 120_000)

  it.each(CLAUDE_MODELS)('%s', (model) => {
    const rates = PRICE_TABLE[model]!
    for (const [category, u] of Object.entries(CLAUDE_CATEGORIES)) {
      const ours = claudeCost(tokens(u.input, u.output, u.w5m, u.w1h, u.read), rates)
      const theirs = oracle.claude.get(`${model} ${category}`)
      expect(theirs, `${model} ${category}: not in ccusage's report`).toBeDefined()
      expect(closeTo(ours, theirs!), `${model} ${category}: ${ours} vs ccusage ${theirs}`).toBe(true)
    }
  })

  it.each(OPENAI_MODELS)('%s', (model) => {
    const rates = PRICE_TABLE[model]!
    for (const [category, u] of Object.entries(CODEX_CATEGORIES)) {
      const ours = codexCost(codexTokens(u.input, u.cached, u.write, u.output), rates)
      const theirs = oracle.codex.get(`${model} ${category}`)
      expect(theirs, `${model} ${category}: not in ccusage's report`).toBeDefined()
      expect(closeTo(ours, theirs!), `${model} ${category}: ${ours} vs ccusage ${theirs}`).toBe(true)
    }
  })

  it("leaves out what ccusage does not price (Claude Code 2.1.332's default claude-opus-5-5)", () => {
    expect(PRICE_TABLE['claude-opus-5-5']).toBeUndefined()
  })
})

describe('price table', () => {
  it('prices Claude usage as Claude Code does (reference: Sonnet 4.5 0.00603, Haiku 4.5 0.00201)', () => {
    const book = priceBook()
    const u = tokens(10, 50, 600, 400, 2000)
    expect(claudeCost(u, book.rates('claude-sonnet-4-5-20250929')!)).toBeCloseTo(0.00603, 12)
    expect(claudeCost(u, book.rates('claude-haiku-4-5-20251001')!)).toBeCloseTo(0.00201, 12)
    // Opus 4.1: in 3, read 5000, out 200 → 0.022545
    expect(claudeCost(tokens(3, 200, 0, 0, 5000), book.rates('claude-opus-4-1-20250805')!)).toBeCloseTo(0.022545, 12)
  })

  it('applies the 200k tier per category for Sonnet 4 / 4.5 responses, and not to a sum of responses', () => {
    const sonnet = priceBook().rates('claude-sonnet-4-5-20250929')!
    expect(claudeCost(tokens(300_000, 0), sonnet)).toBeCloseTo(1.2, 12) // 200k × 3 + 100k × 6
    expect(claudeCost(tokens(300_000, 0), sonnet, false)).toBeCloseTo(0.9, 12)
    expect(claudeCost(tokens(300_000, 0), priceBook().rates('claude-sonnet-4-6')!)).toBeCloseTo(0.9, 12)
  })

  it('prices Codex usage: input includes cached and writes, output includes reasoning (reference 0.0054, 0.009447)', () => {
    const book = priceBook()
    const a = codexTokens(1000, 200, 0, 100)
    const b = codexTokens(2000, 1000, 0, 200)
    expect(codexCost(a, book.rates('gpt-5-codex')!) + codexCost(b, book.rates('gpt-5-codex')!)).toBeCloseTo(0.0054, 12)
    expect(codexCost(codexTokens(2345, 1024, 256, 67), book.rates('gpt-5.5')!)).toBeCloseTo(0.009447, 12)
    expect(codexTokens(1000, 3000, 0, 10)).toEqual(tokens(0, 10, 0, 0, 1000)) // cached clamped to input
  })

  it('doubles GPT-5.5 input above 272k input tokens in one response (writes stay), 1.5× output', () => {
    const rates = priceBook().rates('gpt-5.5')!
    expect(codexCost(codexTokens(272_000, 0, 0, 1000), rates)).toBeCloseTo(1.39, 12)
    expect(codexCost(codexTokens(300_000, 100_000, 50_000, 1000), rates)).toBeCloseTo(1.9575, 12) // as ccusage
    expect(codexCost(codexTokens(300_000, 100_000, 50_000, 1000), rates, false)).toBeCloseTo(
      0.75 + 0.05 + 0.3125 + 0.03,
      12,
    )
  })
})

describe('model-name matching', () => {
  const book = priceBook()
  const sonnet45 = PRICE_TABLE['claude-sonnet-4-5-20250929']

  it.each([
    ['claude-sonnet-4-5-20250929', 'exact'],
    ['claude-sonnet-4-5', 'without its date'],
    ['claude-sonnet-4-5-20260115', 'another date of the same model'],
    ['claude-sonnet-4-5-20250929[1m]', 'a context suffix'],
    ['claude-sonnet-4-5[1m]', 'both'],
    ['Claude-Sonnet-4-5-20250929', 'another case'],
    ['anthropic/claude-sonnet-4-5-20250929', 'a provider prefix'],
  ])('%s (%s) is Sonnet 4.5', (name) => {
    expect(book.rates(name)).toBe(sonnet45)
  })

  it('matches GPT names with OpenAI date suffixes, and nothing fuzzier', () => {
    expect(book.rates('gpt-5-2025-08-07')).toBe(PRICE_TABLE['gpt-5'])
    expect(book.rates('gpt-5-mini')).toBe(PRICE_TABLE['gpt-5-mini'])
    expect(book.rates('gpt-5.1-codex')).toBe(PRICE_TABLE['gpt-5.1-codex'])
    for (const unknown of [
      'claude-opus-5-5',
      'gpt-5-mini-preview',
      'claude-sonnet',
      'gpt-9',
      'claude-sonnet-4-5-20250929-fast',
      'sonnet',
      '',
      'mock-model',
    ]) {
      expect(book.rates(unknown), unknown).toBeNull()
    }
    expect(lookupNames('claude-opus-4-8[1m]')).toEqual(['claude-opus-4-8'])
    expect(lookupNames('claude-haiku-4-5-20251001')).toEqual(['claude-haiku-4-5-20251001', 'claude-haiku-4-5'])
  })

  it('takes config prices over the table, adds models, and fills left-out rates from the usual ratios', () => {
    const custom = priceBook({
      'claude-sonnet-4-5': { input: 4, output: 20 },
      'claude-opus-5-5': { input: 10, output: 50, cache_write_1h: 25, cache_read: 2 },
      'my-local-model': { input: 0, output: 0 },
      'gpt-6': { input: 2, output: 8, cached_input: 0.5 },
    })
    // an override of the undated name applies to the dated one too (config wins before the table is asked)
    expect(custom.rates('claude-sonnet-4-5-20250929')).toEqual({
      input: 4,
      output: 20,
      cache_write_5m: 5,
      cache_write_1h: 8,
      cache_read: 0.4,
    })
    expect(custom.rates('claude-opus-5-5[1m]')).toEqual({
      input: 10,
      output: 50,
      cache_write_5m: 12.5,
      cache_write_1h: 25,
      cache_read: 2,
    })
    expect(custom.rates('my-local-model')).toMatchObject({ input: 0, output: 0 })
    expect(custom.rates('gpt-6')).toMatchObject({ cache_read: 0.5 })
    expect(custom.rates('claude-haiku-4-5-20251001')).toBe(PRICE_TABLE['claude-haiku-4-5-20251001'])
    // an override carries no 200k tier
    expect(claudeCost(tokens(300_000, 0), custom.rates('claude-sonnet-4-5-20250929')!)).toBeCloseTo(1.2, 12)
  })
})
