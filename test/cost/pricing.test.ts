import { describe, expect, it } from 'vitest'
import { PRICE_TABLE, claudeCost, codexCost, codexTokens, lookupNames, priceBook } from '../../lib/cost/pricing.ts'

const tokens = (input: number, output: number, w5m = 0, w1h = 0, read = 0) => ({
  input,
  output,
  cache_write_5m: w5m,
  cache_write_1h: w1h,
  cache_read: read,
})

describe('price table', () => {
  it('holds the reference prices (USD per million tokens)', () => {
    expect(PRICE_TABLE['claude-sonnet-4-5-20250929']).toMatchObject({
      input: 3,
      output: 15,
      cache_write_5m: 3.75,
      cache_write_1h: 6,
      cache_read: 0.3,
    })
    expect(PRICE_TABLE['claude-opus-4-1-20250805']).toMatchObject({
      input: 15,
      output: 75,
      cache_write_5m: 18.75,
      cache_write_1h: 30,
      cache_read: 1.5,
    })
    expect(PRICE_TABLE['claude-opus-4-5-20251101']).toMatchObject({ input: 5, output: 25, cache_write_1h: 10 })
    expect(PRICE_TABLE['claude-haiku-4-5-20251001']).toMatchObject({ input: 1, output: 5, cache_read: 0.1 })
    expect(PRICE_TABLE['claude-3-5-haiku-20241022']).toMatchObject({
      input: 0.8,
      output: 4,
      cache_write_5m: 1,
      cache_write_1h: 1.6,
      cache_read: 0.08,
    })
    expect(PRICE_TABLE['gpt-5-codex']).toMatchObject({
      input: 1.25,
      cache_read: 0.125,
      cache_write_5m: 1.5625,
      output: 10,
    })
    expect(PRICE_TABLE['gpt-5.1-codex']).toMatchObject({ cache_write_5m: 1.25 })
    expect(PRICE_TABLE['gpt-5.5']).toMatchObject({
      input: 5,
      cache_read: 0.5,
      cache_write_5m: 6.25,
      output: 30,
      long_context_272k: true,
    })
    expect(PRICE_TABLE['claude-opus-5-5']).toBeUndefined() // unpriced, as in ccusage
  })

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
