// A Gemini CLI call's cost: its `-o json` stats and its session file, priced with the table. Expected values are
// hand counts (USD per million tokens: gemini-2.5-pro 1.25 / 0.125 cached / 10 out; gemini-3-pro-preview 2 / 0.2 /
// 12, prompts over 200k 4 / 0.4 / 18; gemini-2.5-flash 0.3 / 0.03 / 2.5).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { costOfGeminiCall, geminiStatsCost } from '../../lib/cost/gemini.ts'
import { geminiSessionFiles, readGeminiSession } from '../../lib/cost/gemini-transcript.ts'
import { priceBook } from '../../lib/cost/pricing.ts'
import { tempDir } from '../_helpers.ts'

const SESSION = '0a1b2c3d-1111-4222-8333-444455556666'

/** The counts as `gemini -o json` puts them in stats.models[m].tokens (input = prompt − cached). */
const statsTokens = (prompt: number, cached: number, candidates: number, thoughts: number, tool = 0) => ({
  input: prompt - cached,
  prompt,
  candidates,
  total: prompt + candidates + thoughts + tool,
  cached,
  thoughts,
  tool,
})

/** A session file's records, shaped as Gemini CLI 0.61.0 writes them (docs/reference/gemini-cli.md). */
const meta = (sessionId: string) => ({ sessionId, projectHash: 'ab'.repeat(32), startTime: 'x', kind: 'main' })
const user = (id: string, at: string) => ({ id, timestamp: at, type: 'user', content: [{ text: 'review' }] })
function reply(id: string, at: string, model: string, tokens?: [number, number, number, number, number?]) {
  const [input, cached, output, thoughts, tool = 0] = tokens ?? []
  return {
    id,
    timestamp: at,
    type: 'gemini',
    content: 'VERDICT: APPROVED',
    model,
    ...(tokens ? { tokens: { input, output, cached, thoughts, tool, total: input! + output! + thoughts! } } : {}),
  }
}

/** `<home>/.gemini/tmp/<slug>/chats/session-<time>-<id8>.jsonl` with these records. */
function sessionFile(home: string, records: Array<object | string>, sessionId = SESSION, slug = 'work-dir'): string {
  const chats = join(home, '.gemini', 'tmp', slug, 'chats')
  mkdirSync(chats, { recursive: true })
  const path = join(chats, `session-2026-12-07T21-48-${sessionId.slice(0, 8)}.jsonl`)
  writeFileSync(
    path,
    `${[meta(sessionId), ...records].map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')}\n`,
  )
  return path
}

const prices = priceBook({})

describe('the stats of gemini -o json', () => {
  it('price uncached prompt, cached prompt at the cached rate, and candidates plus thoughts as output', () => {
    // (3456 − 2048) × 1.25 + 2048 × 0.125 + (78 + 34) × 10 = 1760 + 256 + 1120 = 3136 per million
    const cost = geminiStatsCost({ models: { 'gemini-2.5-pro': { tokens: statsTokens(3456, 2048, 78, 34) } } }, prices)
    expect(cost?.usd).toBeCloseTo(0.003136, 12)
    expect(cost?.unpriced).toEqual([])
  })

  it("bill a built-in tool's prompt tokens as input", () => {
    // gemini-2.5-flash: (1000 − 0 + 100) × 0.3 + 10 × 2.5 = 330 + 25 per million
    const cost = geminiStatsCost(
      { models: { 'gemini-2.5-flash': { tokens: statsTokens(1000, 0, 10, 0, 100) } } },
      prices,
    )
    expect(cost?.usd).toBeCloseTo(0.000355, 12)
  })

  it('name a model the table lacks as unpriced, and price the others', () => {
    const cost = geminiStatsCost(
      {
        models: {
          'gemini-2.5-pro': { tokens: statsTokens(3456, 2048, 78, 34) },
          'gemini-3.5-flash-lite': { tokens: statsTokens(500, 0, 20, 0) },
        },
      },
      prices,
    )
    expect(cost).toMatchObject({ unpriced: ['gemini-3.5-flash-lite'], entries: 2 })
    expect(cost?.usd).toBeCloseTo(0.003136, 12)
    expect(cost?.models['gemini-3.5-flash-lite']).toBe(0)
  })

  it("read -o stream-json's names too (which leave the thoughts out)", () => {
    // (3456 − 2048) × 1.25 + 2048 × 0.125 + 78 × 10 = 1760 + 256 + 780 per million
    const streamed = { input_tokens: 3456, output_tokens: 78, cached: 2048, input: 1408, total_tokens: 3568 }
    expect(geminiStatsCost({ models: { 'gemini-2.5-pro': { tokens: streamed } } }, prices)?.usd).toBeCloseTo(
      0.002796,
      12,
    )
  })

  it('are no cost at all when they hold no model', () => {
    expect(geminiStatsCost({ models: {} }, prices)).toBeNull()
    expect(geminiStatsCost(null, prices)).toBeNull()
  })
})

describe('a Gemini session file', () => {
  it('counts a response once, as its last record says, however often it was written again', () => {
    const home = tempDir('pl-gem-')
    const path = sessionFile(home, [
      user('u1', '2026-12-07T21:48:00.000Z'),
      reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro'), // written before its usage came
      reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro', [3456, 2048, 78, 34]),
      { $set: { lastUpdated: '2026-12-07T21:48:02.000Z' } },
      reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro', [3456, 2048, 78, 34]), // tool calls added
      { $set: { messages: [reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro', [3456, 2048, 78, 34])] } },
      '{"id":"g2","type":"gemini","tokens":{"inp', // a line still being written
    ])
    const responses = readGeminiSession(path)
    expect(responses).toHaveLength(1)
    expect(responses[0]).toMatchObject({ id: 'g1', prompt: 3456, cached: 2048, candidates: 78, thoughts: 34 })
  })

  it('applies the >200k-prompt rule to each response, which the stats (a sum) cannot', () => {
    const home = tempDir('pl-gem-')
    sessionFile(home, [
      reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-3-pro-preview', [250_000, 50_000, 1_000, 500]),
      reply('g2', '2026-12-07T21:48:02.000Z', 'gemini-3-pro-preview', [1_000, 0, 100, 0]),
    ])
    // g1 over 200k: 200000 × 4 + 50000 × 0.4 + 1500 × 18 = 847000; g2: 1000 × 2 + 100 × 12 = 3200 (per million)
    const cost = costOfGeminiCall({ stats: null, session_id: SESSION }, { pricing: {}, env: { HOME: home } })
    expect(cost.source).toBe('transcript')
    expect(cost.usd).toBeCloseTo(0.8502, 12)
    // the same tokens as one stats sum: 201000 × 2 + 50000 × 0.2 + 1600 × 12 = 431200 per million
    const summed = geminiStatsCost(
      { models: { 'gemini-3-pro-preview': { tokens: statsTokens(251_000, 50_000, 1_100, 500) } } },
      prices,
    )
    expect(summed?.usd).toBeCloseTo(0.4312, 12)
  })

  it('is found under GEMINI_CLI_HOME by the whole session id, with its subagents, never by the 8-character name alone', () => {
    const home = tempDir('pl-gem-')
    const other = `${SESSION.slice(0, 8)}-9999-4999-8999-999999999999` // same first 8 characters
    sessionFile(home, [reply('x', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro', [9, 0, 9, 0])], other, 'a-other')
    const main = sessionFile(home, [], SESSION, 'b-mine')
    const subagent = join(home, '.gemini', 'tmp', 'b-mine', 'chats', SESSION, 'agent-1.jsonl')
    mkdirSync(join(subagent, '..'), { recursive: true })
    writeFileSync(subagent, `${JSON.stringify({ ...meta('agent-1'), kind: 'subagent' })}\n`)
    expect(geminiSessionFiles(SESSION, { GEMINI_CLI_HOME: home, HOME: '/nonexistent' })).toEqual({
      files: [main],
      subagents: [subagent],
    })
    expect(geminiSessionFiles(SESSION, { HOME: '/nonexistent' }).files).toEqual([])
  })
})

describe('costOfGeminiCall', () => {
  it('takes the stats, keeps the session file as a cross-check, and counts only what the call added to a resumed session', () => {
    const home = tempDir('pl-gem-')
    sessionFile(home, [
      reply('earlier', '2026-12-07T21:40:00.000Z', 'gemini-2.5-pro', [100_000, 0, 1_000, 0]), // a previous call
      reply('g1', '2026-12-07T21:48:01.000Z', 'gemini-2.5-pro', [3456, 2048, 78, 34]),
    ])
    const cost = costOfGeminiCall(
      {
        stats: { models: { 'gemini-2.5-pro': { tokens: statsTokens(3456, 2048, 78, 34) } } },
        session_id: SESSION,
        started_ms: Date.parse('2026-12-07T21:48:00.000Z'),
      },
      { pricing: {}, env: { HOME: home } },
    )
    expect(cost).toMatchObject({ source: 'usage', unpriced_models: [], reported_usd: null })
    expect(cost.usd).toBeCloseTo(0.003136, 12)
    expect(cost.transcript_usd).toBeCloseTo(0.003136, 12)
  })

  it('uses a config price over the table', () => {
    const cost = costOfGeminiCall(
      { stats: { models: { 'gemini-9-ultra': { tokens: statsTokens(1_000_000, 0, 0, 0) } } }, session_id: null },
      { pricing: { 'gemini-9-ultra': { input: 7, output: 70 } }, env: { HOME: '/nonexistent' } },
    )
    expect(cost.usd).toBeCloseTo(7, 12)
  })

  it('is unknown, not zero, when neither stats nor a session file say anything', () => {
    const cost = costOfGeminiCall({ stats: null, session_id: SESSION }, { pricing: {}, env: { HOME: '/nonexistent' } })
    expect(cost).toMatchObject({ usd: null, source: 'none', transcript_usd: null })
  })
})
