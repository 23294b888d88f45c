// One reviewer call's cost: usage at the table's prices, the agent's own figure, and the transcript, all kept.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { costOfReviewerCall } from '../../lib/cost/reviewer.ts'
import type { Usage } from '../../lib/run/state.ts'
import { tempDir } from '../_helpers.ts'
import { claudeAssistant, claudeUser, codexMeta, codexTokenCount, codexTurn, rolloutPath, writeLines } from './_gen.ts'

const usage = (u: Partial<Usage>): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_write_5m_tokens: 0,
  cache_write_1h_tokens: 0,
  cached_input_tokens: 0,
  reasoning_output_tokens: 0,
  ...u,
})

function homes() {
  const root = tempDir('pl-rev-')
  return {
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    PAIR_LOOP_HOME: join(root, 'pl'),
    HOME: root,
  }
}

describe('costOfReviewerCall: claude -p', () => {
  const claudeUsage = usage({
    input_tokens: 10,
    output_tokens: 50,
    cache_creation_input_tokens: 1000,
    cache_read_input_tokens: 2000,
    cache_write_5m_tokens: 600,
    cache_write_1h_tokens: 400,
  })

  it("equals claude's own total_cost_usd for the reference call, and keeps the reported figure", () => {
    const cost = costOfReviewerCall(
      {
        tool: 'claude',
        model: 'claude-sonnet-4-5-20250929',
        usage: claudeUsage,
        reported_usd: 0.00603,
        session_id: null,
      },
      { pricing: {}, env: homes() },
    )
    expect(cost).toMatchObject({ source: 'usage', unpriced_models: [], transcript_usd: null, reported_usd: 0.00603 })
    expect(cost.usd).toBeCloseTo(0.00603, 12)
    expect(cost.models['claude-sonnet-4-5-20250929']).toBeCloseTo(0.00603, 12)
  })

  it('prices modelUsage per model, [1m] suffixes included; the 5m/1h split of usage applies to a single model', () => {
    const single = costOfReviewerCall(
      {
        tool: 'claude',
        model: null,
        usage: claudeUsage,
        reported_usd: 0.00603,
        session_id: null,
        model_usage: {
          'claude-sonnet-4-5-20250929[1m]': {
            inputTokens: 10,
            outputTokens: 50,
            cacheReadInputTokens: 2000,
            cacheCreationInputTokens: 1000,
            costUSD: 0.00603,
          },
        },
      },
      { pricing: {}, env: homes() },
    )
    expect(single.usd).toBeCloseTo(0.00603, 12)
    const two = costOfReviewerCall(
      {
        tool: 'claude',
        model: 'claude-opus-4-8',
        usage: null,
        reported_usd: null,
        session_id: null,
        model_usage: {
          'claude-opus-4-8[1m]': {
            inputTokens: 100,
            outputTokens: 1000,
            cacheReadInputTokens: 10_000,
            cacheCreationInputTokens: 2000,
          },
          'claude-haiku-4-5-20251001': { inputTokens: 500, outputTokens: 100 },
        },
      },
      { pricing: {}, env: homes() },
    )
    // opus 4.8: 100×5 + 1000×25 + 10000×0.5 + 2000×6.25 (all 5m: no split for several models); haiku: 500×1 + 100×5
    expect(two.models['claude-opus-4-8[1m]']).toBeCloseTo((500 + 25_000 + 5000 + 12_500) / 1e6, 12)
    expect(two.models['claude-haiku-4-5-20251001']).toBeCloseTo(1000 / 1e6, 12)
    expect(two.usd).toBeCloseTo(44_000 / 1e6, 12)
  })

  it('an unknown model is listed, never priced by guess; its own reported figure is used when there is one', () => {
    const withReport = costOfReviewerCall(
      { tool: 'claude', model: 'claude-opus-5-5', usage: claudeUsage, reported_usd: 0.0123, session_id: null },
      { pricing: {}, env: homes() },
    )
    expect(withReport).toMatchObject({ usd: 0.0123, source: 'reported', unpriced_models: ['claude-opus-5-5'] })
    const without = costOfReviewerCall(
      { tool: 'claude', model: 'claude-opus-5-5', usage: claudeUsage, reported_usd: null, session_id: null },
      { pricing: {}, env: homes() },
    )
    expect(without).toMatchObject({ usd: 0, source: 'usage', unpriced_models: ['claude-opus-5-5'] })
    // config can price it
    const priced = costOfReviewerCall(
      { tool: 'claude', model: 'claude-opus-5-5', usage: claudeUsage, reported_usd: null, session_id: null },
      {
        env: homes(),
        pricing: { 'claude-opus-5-5': { input: 1, output: 1, cache_write_5m: 1, cache_write_1h: 1, cache_read: 1 } },
      },
    )
    expect(priced.usd).toBeCloseTo(3060 / 1e6, 12)
    expect(priced.unpriced_models).toEqual([])
  })

  it('reads the session transcript as a cross-check and keeps both figures when they differ', () => {
    const env = homes()
    const sid = 'eeeeeeee-0000-4000-8000-000000000005'
    const ts = '2026-01-05T09:00:03.000Z'
    // the transcript shows a second response the structured output did not count
    writeLines(join(env.CLAUDE_CONFIG_DIR, 'projects', '-elsewhere', `${sid}.jsonl`), [
      claudeUser(sid, ts, 'review'),
      claudeAssistant({
        sessionId: sid,
        ts,
        id: 'msg_1',
        requestId: 'req_1',
        model: 'claude-sonnet-4-5-20250929',
        usage: { input: 10, output: 50, w5m: 600, w1h: 400, read: 2000 },
      }),
      claudeAssistant({
        sessionId: sid,
        ts,
        id: 'msg_1',
        requestId: 'req_1',
        model: 'claude-sonnet-4-5-20250929',
        usage: { input: 10, output: 50, w5m: 600, w1h: 400, read: 2000 },
        block: 'again',
      }),
      claudeAssistant({
        sessionId: sid,
        ts,
        id: 'msg_2',
        requestId: 'req_2',
        model: 'claude-haiku-4-5-20251001',
        usage: { input: 1000, output: 0, w5m: 0, w1h: 0, read: 0 },
      }),
    ])
    const cost = costOfReviewerCall(
      {
        tool: 'claude',
        model: 'claude-sonnet-4-5-20250929',
        usage: claudeUsage,
        reported_usd: 0.00603,
        session_id: sid,
      },
      { pricing: {}, env },
    )
    expect(cost.usd).toBeCloseTo(0.00603, 12)
    expect(cost.transcript_usd).toBeCloseTo(0.00703, 12)
    // no usage at all: the transcript is the figure
    const fromTranscript = costOfReviewerCall(
      { tool: 'claude', model: null, usage: null, reported_usd: null, session_id: sid },
      { pricing: {}, env },
    )
    expect(fromTranscript).toMatchObject({ source: 'transcript' })
    expect(fromTranscript.usd).toBeCloseTo(0.00703, 12)
  })

  it('without a 5m/1h split, all cache writes are 5-minute writes (as Claude Code prices them)', () => {
    const cost = costOfReviewerCall(
      {
        tool: 'claude',
        model: 'claude-sonnet-4-5-20250929',
        usage: usage({
          input_tokens: 10,
          output_tokens: 50,
          cache_creation_input_tokens: 1000,
          cache_read_input_tokens: 2000,
        }),
        reported_usd: null,
        session_id: null,
      },
      { pricing: {}, env: homes() },
    )
    expect(cost.usd).toBeCloseTo((30 + 750 + 3750 + 600) / 1e6, 12)
  })

  it("prices a call's usage above 200k at the base rate: the 200k rule is per API response, the call is their sum", () => {
    const cost = costOfReviewerCall(
      {
        tool: 'claude',
        model: 'claude-sonnet-4-5-20250929',
        usage: usage({ input_tokens: 300_000, output_tokens: 250_000 }),
        reported_usd: null,
        session_id: null,
      },
      { pricing: {}, env: homes() },
    )
    // $3 input, $15 output per million (tiered: 0.6 + 0.6 input, 3 + 1.125 output = 5.325)
    expect(cost.usd).toBeCloseTo(0.9 + 3.75, 12)
  })
})

describe('costOfReviewerCall: codex exec', () => {
  const mock = usage({
    input_tokens: 2345,
    cached_input_tokens: 1024,
    cache_creation_input_tokens: 256,
    output_tokens: 67,
    reasoning_output_tokens: 12,
  })

  it("prices the mock's usage at the table (gpt-5.5: 0.009447) and cross-checks the thread's rollout", () => {
    const env = homes()
    const thread = '01a2b3c4-0000-7000-8000-0000000000aa'
    const total = { input: 2345, cached: 1024, write: 256, output: 67, reasoning: 12 }
    writeLines(rolloutPath(env.CODEX_HOME, thread, '2026/11/30'), [
      codexMeta(thread, '2026-11-30T04:51:42.000Z'),
      codexTurn('gpt-5.5', '2026-11-30T04:51:42.100Z'),
      codexTokenCount('2026-11-30T04:51:45.000Z', total, total),
      codexTokenCount('2026-11-30T04:51:45.500Z', total, total),
    ])
    const given = costOfReviewerCall(
      { tool: 'codex', model: 'gpt-5.5', usage: mock, reported_usd: null, session_id: thread },
      { pricing: {}, env },
    )
    expect(given).toMatchObject({ source: 'usage', unpriced_models: [] })
    expect(given.usd).toBeCloseTo(0.009447, 12)
    expect(given.transcript_usd).toBeCloseTo(0.009447, 12)
    // the model is not in codex's stream: without -m it comes from the rollout's turn_context
    const found = costOfReviewerCall(
      { tool: 'codex', model: null, usage: mock, reported_usd: null, session_id: thread },
      { pricing: {}, env },
    )
    expect(found.models).toEqual({ 'gpt-5.5': expect.any(Number) })
    expect(found.usd).toBeCloseTo(0.009447, 12)
  })

  it("prices a thread's usage above 272k at the base rate: the long-context rule is per response, the call is their sum", () => {
    const cost = costOfReviewerCall(
      {
        tool: 'codex',
        model: 'gpt-5.5',
        usage: usage({ input_tokens: 400_000, cached_input_tokens: 100_000, output_tokens: 20_000 }),
        reported_usd: null,
        session_id: null,
      },
      { pricing: {}, env: homes() },
    )
    // 300k uncached at $5, 100k cached at $0.5, 20k output at $30 per million (long context: 3 + 0.1 + 0.9 = 4)
    expect(cost.usd).toBeCloseTo(1.5 + 0.05 + 0.6, 12)
  })

  it('no model anywhere: listed as unknown, costs nothing, never a guess', () => {
    const cost = costOfReviewerCall(
      { tool: 'codex', model: null, usage: mock, reported_usd: null, session_id: 'no-such-thread' },
      { pricing: {}, env: homes() },
    )
    expect(cost).toMatchObject({ usd: 0, source: 'usage', unpriced_models: ['(unknown model)'], transcript_usd: null })
  })

  it('nothing to go on: usd null, source none', () => {
    expect(
      costOfReviewerCall(
        { tool: 'codex', model: 'gpt-5', usage: null, reported_usd: null, session_id: null },
        { pricing: {}, env: homes() },
      ),
    ).toMatchObject({ usd: null, source: 'none' })
  })
})

describe('costOfReviewerCall: a custom command', () => {
  it('reads Claude-style output (reported cost) and Codex-style usage (cached input) by their shape', () => {
    const claudeLike = costOfReviewerCall(
      { tool: 'custom', model: null, usage: null, reported_usd: 0.5, session_id: null },
      { pricing: {}, env: homes() },
    )
    expect(claudeLike).toMatchObject({ usd: 0.5, source: 'reported' })
    const codexLike = costOfReviewerCall(
      {
        tool: 'custom',
        model: 'gpt-5',
        usage: usage({ input_tokens: 1000, cached_input_tokens: 200, output_tokens: 100 }),
        reported_usd: null,
        session_id: null,
      },
      { pricing: {}, env: homes() },
    )
    expect(codexLike.usd).toBeCloseTo((800 * 1.25 + 200 * 0.125 + 100 * 10) / 1e6, 12)
  })
})

describe('costOfReviewerCall: a continued session', () => {
  it("counts from its transcript only what the call added, not the earlier rounds' responses it continues", () => {
    const env = homes()
    const sid = '5e1f0c2a-0000-4000-8000-0000000000c7'
    const round1 = Date.parse('2026-12-08T01:00:00Z')
    const round2 = round1 + 60_000
    const haiku = 'claude-haiku-4-5-20251001' // $1 input, $5 output per million
    writeLines(join(env.CLAUDE_CONFIG_DIR, 'projects', '-elsewhere', `${sid}.jsonl`), [
      claudeAssistant({
        sessionId: sid,
        ts: new Date(round1).toISOString(),
        id: 'msg_r1',
        requestId: 'req_r1',
        model: haiku,
        usage: { input: 1_000_000, output: 0, w5m: 0, w1h: 0, read: 0 },
      }),
      claudeAssistant({
        sessionId: sid,
        ts: new Date(round2 + 5).toISOString(),
        id: 'msg_r2',
        requestId: 'req_r2',
        model: haiku,
        usage: { input: 200_000, output: 10_000, w5m: 0, w1h: 0, read: 0 },
      }),
    ])
    const call = { tool: 'claude' as const, model: haiku, usage: null, reported_usd: null, session_id: sid }
    // round 2 alone: 200k × $1 + 10k × $5 per million = $0.25; the whole session would be $1.25
    const continued = costOfReviewerCall({ ...call, since_ms: round2 }, { pricing: {}, env })
    expect(continued.transcript_usd).toBeCloseTo(0.25, 12)
    // the control: without the call's start, the continued session's history is counted again
    expect(costOfReviewerCall(call, { pricing: {}, env }).transcript_usd).toBeCloseTo(1.25, 12)
  })
})
