// Exactness against ccusage 20.0.24 on generated transcripts with every kind of duplicate the CLIs produce.
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { dedupeClaude, scanClaude } from '../../lib/cost/claude.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import { priceBook } from '../../lib/cost/pricing.ts'
import { costOfReviewerCall } from '../../lib/cost/reviewer.ts'
import type { RunState } from '../../lib/run/state.ts'
import { tempDir } from '../_helpers.ts'
import {
  CLAUDE_MODELS,
  type ClaudeUsage,
  type CodexTotals,
  type Line,
  ccusage,
  claudeAssistant,
  claudeUser,
  closeTo,
  codexMessage,
  codexMeta,
  codexTokenCount,
  codexTurn,
  codexUsageRecord,
  coderRound,
  makeRun,
  rng,
  rolloutPath,
  writeLines,
} from './_gen.ts'

const DAYS = ['2026-01-05', '2026-01-06', '2026-01-07']
const at = (day: number, seconds: number) =>
  new Date(Date.parse(`${DAYS[day]}T01:00:00.000Z`) + seconds * 1000).toISOString()

/**
 * Session A (days 1–2): responses written once per content block, some with an early partial-usage copy, a few
 * without requestId, synthetic error lines, a garbage line; its subagent file: sidechain responses of its own and
 * sidechain replays of A's responses (same message.id, another requestId). Session B (day 3) resumes A: it starts
 * with a copy of A's first lines, then goes on.
 */
function claudeFixture(configDir: string) {
  const r = rng(7)
  const folder = join(configDir, 'projects', '-home-alice-src-app')
  const A = 'aaaaaaaa-0000-4000-8000-000000000001'
  const B = 'bbbbbbbb-0000-4000-8000-000000000002'
  const a: Line[] = []
  const sub: Line[] = []
  const b: Line[] = []
  const usage = (): ClaudeUsage => {
    const split = r.chance(0.85)
    return {
      input: r.int(1, 5000),
      output: r.int(1, 30_000),
      read: r.chance(0.8) ? r.int(0, 190_000) : 0,
      w5m: r.chance(0.7) ? r.int(0, 150_000) : 0,
      w1h: split && r.chance(0.5) ? r.int(0, 150_000) : 0,
      split,
      speed: r.chance(0.3),
    }
  }
  const respond = (
    into: Line[],
    session: string,
    tag: string,
    n: number,
    ts: string,
    opts: { sidechain?: boolean } = {},
  ) => {
    const u = usage()
    const model = r.pick(CLAUDE_MODELS)
    const id = `msg_${tag}${n}`
    const requestId = r.chance(0.05) ? undefined : `req_${tag}${n}`
    const blocks = r.int(1, 3)
    if (r.chance(0.3))
      into.push(
        claudeAssistant({
          sessionId: session,
          ts,
          id,
          requestId,
          model,
          usage: { ...u, output: 1, speed: false },
          sidechain: opts.sidechain,
        }),
      )
    for (let k = 0; k < blocks; k++)
      into.push(
        claudeAssistant({
          sessionId: session,
          ts,
          id,
          requestId,
          model,
          usage: u,
          sidechain: opts.sidechain,
          block: `block ${k}`,
        }),
      )
    return { id, requestId, model, u, ts }
  }
  const replayable: Array<ReturnType<typeof respond>> = []
  let n = 0
  for (let day = 0; day < 2; day++) {
    for (let i = 0; i < 40; i++) {
      const ts = at(day, i * 600)
      a.push(claudeUser(A, ts))
      replayable.push(respond(a, A, 'A', ++n, ts))
      if (i % 9 === 0)
        a.push(
          claudeAssistant({
            sessionId: A,
            ts,
            id: `msg_err${n}`,
            model: '<synthetic>',
            usage: { input: 0, output: 0, w5m: 0, w1h: 0, read: 0 },
          }),
        )
      if (i === 13) a.push('{"type":"assistant","message":{"id":"msg_cut"') // a line cut short by a crash
      if (i % 4 === 0) respond(sub, A, 'S', n, at(day, i * 600 + 30), { sidechain: true })
    }
  }
  // sidechain replays of A's responses: same message.id and instant, another requestId, the parent's cache reads
  // (which may make the replay's total larger); a few replays at another instant, which ccusage counts apart
  replayable.forEach((p, i) => {
    if (i % 5 !== 2) return
    const ts = i % 15 === 2 ? new Date(Date.parse(p.ts) + 1000).toISOString() : p.ts
    sub.push(
      claudeAssistant({
        sessionId: A,
        ts,
        id: p.id,
        requestId: `req_replay_${p.id}`,
        model: p.model,
        usage: { ...p.u, read: p.u.read + r.int(0, 5000) },
        sidechain: true,
      }),
    )
  })
  // B resumes A on day 3: the first lines of A copied over, then new work
  b.push(...a.slice(0, 25))
  for (let i = 0; i < 30; i++) {
    const ts = at(2, i * 700)
    b.push(claudeUser(B, ts))
    respond(b, B, 'B', ++n, ts)
  }
  writeLines(join(folder, `${A}.jsonl`), a)
  writeLines(join(folder, A, 'subagents', 'agent-0001.jsonl'), sub)
  writeLines(join(folder, `${B}.jsonl`), b)
  return { A, B }
}

/**
 * Three threads: T1 (days 1–2, model switch, re-emitted token_count lines, info:null lines, token_usage_record
 * lines, cache writes), T2 (day 3) and T3, a fork of T1 that starts by replaying T1's usage.
 */
function codexFixture(codexHome: string) {
  const r = rng(11)
  const ids = [
    '01a2b3c4-0000-7000-8000-000000000001',
    '01a2b3c4-0000-7000-8000-000000000002',
    '01a2b3c4-0000-7000-8000-000000000003',
  ]
  const step = (): CodexTotals => {
    const input = r.int(1000, 250_000)
    const cached = r.chance(0.7) ? r.int(0, input) : 0
    const write = r.chance(0.4) ? r.int(0, input - cached) : 0
    const output = r.int(10, 20_000)
    return { input, cached, write, output, reasoning: r.int(0, output) }
  }
  const add = (a: CodexTotals, b: CodexTotals): CodexTotals => ({
    input: a.input + b.input,
    cached: a.cached + b.cached,
    write: (a.write ?? 0) + (b.write ?? 0),
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  })
  const thread = (lines: Line[], from: CodexTotals, days: number[], models: string[], events: number) => {
    let total = from
    const history: Array<[CodexTotals, CodexTotals]> = []
    for (let i = 0; i < events; i++) {
      const day = days[Math.floor((i * days.length) / events)]!
      const ts = at(day, i * 900)
      if (i % Math.ceil(events / models.length) === 0)
        lines.push(codexTurn(models[Math.floor(i / Math.ceil(events / models.length))]!, ts))
      lines.push(codexMessage(ts, `working on step ${i}`))
      const last = step()
      total = add(total, last)
      history.push([total, last])
      lines.push(codexTokenCount(ts, total, last))
      if (r.chance(0.3)) lines.push(codexTokenCount(at(day, i * 900 + 5), total, last)) // re-emit, unchanged totals
      if (r.chance(0.3)) lines.push(codexTokenCount(at(day, i * 900 + 6), null)) // rate limits only
      if (r.chance(0.3)) lines.push(codexUsageRecord(at(day, i * 900 + 7), last))
    }
    return { total, history }
  }
  const zero: CodexTotals = { input: 0, cached: 0, write: 0, output: 0, reasoning: 0 }
  const t1: Line[] = [codexMeta(ids[0]!, at(0, 0))]
  const first = thread(t1, zero, [0, 1], ['gpt-5-codex', 'gpt-5-mini'], 24)
  const t2: Line[] = [codexMeta(ids[1]!, at(2, 0))]
  thread(t2, zero, [2], ['gpt-5.1-codex', 'gpt-5.2'], 12)
  // the fork replays T1's usage in a same-second burst, then goes on
  const t3: Line[] = [
    codexMeta(ids[2]!, at(2, 40_000), { forked_from_id: ids[0] }),
    codexTurn('gpt-5-codex', at(2, 40_000)),
  ]
  for (const [total, last] of first.history) t3.push(codexTokenCount(at(2, 40_000), total, last))
  thread(t3, first.total, [2], ['gpt-5-codex'], 6)
  writeLines(rolloutPath(codexHome, ids[0]!, '2026/01/05'), t1)
  writeLines(rolloutPath(codexHome, ids[1]!, '2026/01/07'), t2)
  writeLines(rolloutPath(codexHome, ids[2]!, '2026/01/07'), t3)
  return ids
}

/** Rounds at the day boundaries, so each round's coder spend is one ccusage daily row. */
function dayRun(coder: 'claude' | 'codex', sessions: [string, string]): RunState {
  return makeRun({
    coder,
    created_at: `${DAYS[0]}T00:00:00.000Z`,
    rounds: [
      coderRound(1, sessions[0], `${DAYS[1]}T00:00:00.000Z`),
      coderRound(2, sessions[1], `${DAYS[2]}T00:00:00.000Z`),
    ],
    phase: 'coding',
  })
}

describe('exactness against ccusage 20.0.24', () => {
  const root = tempDir('pl-oracle-')
  const env = {
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    PAIR_LOOP_HOME: join(root, 'pl'),
    HOME: root,
  }
  let claude: { A: string; B: string }
  let codex: string[]
  beforeAll(() => {
    claude = claudeFixture(env.CLAUDE_CONFIG_DIR)
    codex = codexFixture(env.CODEX_HOME)
  })

  it('Claude: the coder total and each round equal ccusage (UTC daily rows)', () => {
    const daily = ccusage(['claude', 'daily', '--json', '--offline', '--mode', 'calculate', '-z', 'UTC'], {
      CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR,
    })
    const run = dayRun('claude', [claude.A, claude.B])
    const total = daily.totals.totalCost as number
    expect(total).toBeGreaterThan(1)
    expect(daily.daily.map((d: any) => d.date)).toEqual(DAYS)
    for (const pass of ['cold', 'warm']) {
      const ledger = computeLedger(run, { pricing: {}, env })
      expect(closeTo(ledger.by_role.coder.usd, total), `${pass}: ${ledger.by_role.coder.usd} vs ${total}`).toBe(true)
      expect(ledger.rounds.map((row) => [row.n, row.in_progress])).toEqual([
        [1, false],
        [2, false],
        [3, true],
      ])
      for (const [i, row] of ledger.rounds.entries()) {
        expect(
          closeTo(row.coder.usd, daily.daily[i].totalCost, total),
          `${pass} round ${row.n}: ${row.coder.usd} vs ${daily.daily[i].totalCost}`,
        ).toBe(true)
      }
      const tokens = ledger.by_role.coder.tokens
      expect(tokens.input).toBe(daily.totals.inputTokens)
      expect(tokens.output).toBe(daily.totals.outputTokens)
      expect(tokens.cache_read).toBe(daily.totals.cacheReadTokens)
      expect(tokens.cache_write_5m + tokens.cache_write_1h).toBe(daily.totals.cacheCreationTokens)
      expect(ledger.unpriced_models).toEqual([])
      // the cut line is listed, not crashed on; the synthetic error lines are no cost
      const main = ledger.sources.find((s) => s.path?.endsWith(`${claude.A}.jsonl`))!
      expect(main.skipped).toEqual([expect.objectContaining({ reason: 'not a JSON object', count: 2 })]) // one a day
      expect(ledger.sources.filter((s) => s.role === 'coder').map((s) => s.status)).toEqual(['read', 'read', 'read'])
    }
  })

  it("Claude: equals ccusage's session report too where that report merges the same replays", () => {
    // ccusage's `session` report merges a sidechain replay only at the parent's exact instant; without replays at
    // other instants both reports, and pair-loop, agree
    const sessions = ccusage(['claude', 'session', '--json', '--offline', '--mode', 'calculate'], {
      CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR,
    })
    const daily = ccusage(['claude', 'daily', '--json', '--offline', '--mode', 'calculate', '-z', 'UTC'], {
      CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR,
    })
    expect(sessions.totals.totalCost).toBeGreaterThan(daily.totals.totalCost) // the replays at other instants
    const dir = join(root, 'claude-same-instant')
    const sub = join('projects', '-home-alice-src-app', claude.A, 'subagents', 'agent-0001.jsonl')
    cpSync(env.CLAUDE_CONFIG_DIR, dir, { recursive: true })
    const lines = readFileSync(join(dir, sub), 'utf8')
      .split('\n')
      .filter((l) => !l.includes('"req_replay_') || !JSON.parse(l).timestamp.endsWith(':01.000Z'))
    writeFileSync(join(dir, sub), lines.join('\n'))
    const again = ccusage(['claude', 'session', '--json', '--offline', '--mode', 'calculate'], {
      CLAUDE_CONFIG_DIR: dir,
    })
    const ledger = computeLedger(dayRun('claude', [claude.A, claude.B]), {
      pricing: {},
      env: { ...env, CLAUDE_CONFIG_DIR: dir },
    })
    expect(
      closeTo(ledger.by_role.coder.usd, again.totals.totalCost),
      `${ledger.by_role.coder.usd} vs ${again.totals.totalCost}`,
    ).toBe(true)
  })

  it('Codex: the coder total and each round equal ccusage (re-emits, info:null, usage records, a fork)', () => {
    const sessions = ccusage(['codex', 'session', '--json', '--offline', '-z', 'UTC'], { CODEX_HOME: env.CODEX_HOME })
    const daily = ccusage(['codex', 'daily', '--json', '--offline', '-z', 'UTC'], { CODEX_HOME: env.CODEX_HOME })
    const run = makeRun({ ...dayRun('codex', [codex[0]!, codex[1]!]) })
    run.rounds.push(coderRound(3, codex[2]!, `${DAYS[2]}T23:59:59.000Z`))
    const ledger = computeLedger(run, { pricing: {}, env })
    const total = sessions.totals.costUSD as number
    expect(total).toBeGreaterThan(1)
    expect(closeTo(ledger.by_role.coder.usd, total), `${ledger.by_role.coder.usd} vs ${total}`).toBe(true)
    expect(daily.daily.map((d: any) => d.date)).toEqual(DAYS)
    const perDay = [ledger.rounds[0]!.coder.usd, ledger.rounds[1]!.coder.usd, ledger.rounds[2]!.coder.usd]
    for (const [i, usd] of perDay.entries()) {
      expect(closeTo(usd, daily.daily[i].costUSD, total), `day ${i}: ${usd} vs ${daily.daily[i].costUSD}`).toBe(true)
    }
    const tokens = ledger.by_role.coder.tokens
    expect(tokens.input).toBe(sessions.totals.inputTokens)
    expect(tokens.cache_read).toBe(sessions.totals.cacheReadTokens)
    expect(tokens.cache_write_5m).toBe(sessions.totals.cacheCreationTokens)
    expect(tokens.output).toBe(sessions.totals.outputTokens)
  })

  it('the de-duplication rules, case by case (each case on its own day: one ccusage daily row each)', () => {
    const dir = join(root, 'claude-rules')
    const sid = 'abababab-0000-4000-8000-000000000009'
    const S = 'claude-sonnet-4-5-20250929'
    const H = 'claude-haiku-4-5-20251001'
    const u = (input: number, extra: Partial<ClaudeUsage> = {}): ClaudeUsage => ({
      input,
      output: 10,
      w5m: 100,
      w1h: 50,
      read: 1000,
      ...extra,
    })
    type Copy = { id?: string; req?: string; u: ClaudeUsage; side?: boolean; model?: string; dt?: number }
    const cases: Record<string, Copy[]> = {
      'one line per content block': [
        { id: 'm', req: 'r', u: u(500) },
        { id: 'm', req: 'r', u: u(500) },
        { id: 'm', req: 'r', u: u(500) },
      ],
      'partial copy first': [
        { id: 'm', req: 'r', u: u(500, { output: 1 }) },
        { id: 'm', req: 'r', u: u(500) },
      ],
      'partial copy last': [
        { id: 'm', req: 'r', u: u(500) },
        { id: 'm', req: 'r', u: u(500, { output: 1 }) },
      ],
      'no requestId: (id, none) is the key': [
        { id: 'm', u: u(500) },
        { id: 'm', u: u(900) },
        { id: 'm', req: 'r', u: u(300) },
      ],
      'no message.id: never merged': [
        { req: 'r', u: u(500) },
        { req: 'r', u: u(500) },
      ],
      'same id, two requests, no sidechain': [
        { id: 'm', req: 'r1', u: u(500) },
        { id: 'm', req: 'r2', u: u(700) },
      ],
      'sidechain replay after the main copy': [
        { id: 'm', req: 'r1', u: u(500) },
        { id: 'm', req: 'r2', u: u(900), side: true },
      ],
      'sidechain replay before the main copy': [
        { id: 'm', req: 'r2', u: u(900), side: true },
        { id: 'm', req: 'r1', u: u(500) },
      ],
      'sidechain replay at another instant': [
        { id: 'm', req: 'r1', u: u(500) },
        { id: 'm', req: 'r2', u: u(900), side: true, dt: 3600 },
      ],
      'two sidechain copies': [
        { id: 'm', req: 'r1', u: u(500), side: true },
        { id: 'm', req: 'r2', u: u(900), side: true, dt: 60 },
      ],
      'exact key on and off the sidechain': [
        { id: 'm', req: 'r', u: u(500) },
        { id: 'm', req: 'r', u: u(900), side: true },
      ],
      'a tie goes to the copy with usage.speed': [
        { id: 'm', req: 'r', u: u(500), model: H },
        { id: 'm', req: 'r', u: u(500, { speed: true }) },
      ],
      'no 5m/1h split: all 5-minute writes': [{ id: 'm', req: 'r', u: u(500, { split: false, w1h: 0, w5m: 4000 }) }],
    }
    const lines: Line[] = []
    const names = Object.keys(cases)
    names.forEach((name, day) => {
      const base = Date.parse('2026-02-01T12:00:00.000Z') + day * 86_400_000
      for (const c of cases[name]!) {
        lines.push(
          claudeAssistant({
            sessionId: sid,
            ts: new Date(base + (c.dt ?? 0) * 1000).toISOString(),
            id: c.id && `msg_${day}_${c.id}`,
            requestId: c.req && `req_${day}_${c.req}`,
            model: c.model ?? S,
            usage: c.u,
            sidechain: c.side,
          }),
        )
      }
    })
    lines.push(
      claudeAssistant({
        sessionId: sid,
        ts: '2026-03-01T00:00:00.000Z',
        id: 'msg_err',
        model: '<synthetic>',
        usage: u(0),
      }),
    )
    writeLines(join(dir, 'projects', '-home-alice-src-app', `${sid}.jsonl`), lines)
    const daily = ccusage(['claude', 'daily', '--json', '--offline', '--mode', 'calculate', '-z', 'UTC'], {
      CLAUDE_CONFIG_DIR: dir,
    })
    const oracle = new Map<string, number>(daily.daily.map((d: any) => [d.date, d.totalCost]))
    const items = dedupeClaude(
      [scanClaude(join(dir, 'projects', '-home-alice-src-app', `${sid}.jsonl`), null)],
      priceBook(),
    )
    names.forEach((name, day) => {
      const date = new Date(Date.parse('2026-02-01T00:00:00.000Z') + day * 86_400_000).toISOString().slice(0, 10)
      const ours = items
        .filter((i) => new Date(i.ts).toISOString().slice(0, 10) === date)
        .reduce((sum, i) => sum + i.usd, 0)
      expect(closeTo(ours, oracle.get(date) ?? 0), `${name}: ${ours} vs ${oracle.get(date)}`).toBe(true)
    })
  })

  it("a reviewer call's transcript figure equals ccusage on that session", () => {
    // a `claude -p` session of its own: 7 lines, the response written once per content block, one partial copy
    const dir = join(root, 'reviewer-claude')
    const sid = 'cccccccc-0000-4000-8000-000000000003'
    const u: ClaudeUsage = { input: 10, output: 50, w5m: 600, w1h: 400, read: 2000 }
    const line = (usage: ClaudeUsage, block: string) =>
      claudeAssistant({
        sessionId: sid,
        ts: at(0, 5),
        id: 'msg_rev',
        requestId: 'req_rev',
        model: 'claude-sonnet-4-5-20250929',
        usage,
        block,
      })
    writeLines(join(dir, 'projects', '-home-alice-src-app', `${sid}.jsonl`), [
      { type: 'queue-operation', operation: 'enqueue', timestamp: at(0, 0), sessionId: sid },
      { type: 'queue-operation', operation: 'dequeue', timestamp: at(0, 0), sessionId: sid },
      claudeUser(sid, at(0, 1), 'review the diff'),
      line({ ...u, output: 1 }, 'thinking'),
      line(u, 'text'),
      line(u, 'tool_use'),
      { type: 'last-prompt', lastPrompt: 'review the diff', sessionId: sid },
    ])
    const oracle = ccusage(['claude', 'session', '--json', '--offline', '--mode', 'calculate'], {
      CLAUDE_CONFIG_DIR: dir,
    })
    const usage = {
      input_tokens: 10,
      output_tokens: 50,
      cache_creation_input_tokens: 1000,
      cache_read_input_tokens: 2000,
      cache_write_5m_tokens: 600,
      cache_write_1h_tokens: 400,
      cached_input_tokens: 0,
      reasoning_output_tokens: 0,
    }
    const cost = costOfReviewerCall(
      { tool: 'claude', model: 'claude-sonnet-4-5-20250929', usage, reported_usd: 0.00603, session_id: sid },
      { pricing: {}, env: { ...env, CLAUDE_CONFIG_DIR: dir } },
    )
    expect(oracle.totals.totalCost).toBeCloseTo(0.00603, 12)
    expect(cost).toMatchObject({ source: 'usage', unpriced_models: [], reported_usd: 0.00603 })
    expect(closeTo(cost.usd!, 0.00603)).toBe(true)
    expect(closeTo(cost.transcript_usd!, oracle.totals.totalCost)).toBe(true)

    // a Codex reviewer thread: the rollout's figure equals ccusage's for that file
    const rollout = costOfReviewerCall(
      { tool: 'codex', model: null, usage: null, reported_usd: null, session_id: codex[1]! },
      { pricing: {}, env },
    )
    const t2 = (
      ccusage(['codex', 'session', '--json', '--offline'], { CODEX_HOME: env.CODEX_HOME }).sessions as any[]
    ).find((s) => String(s.sessionFile ?? s.sessionId).includes(codex[1]!))
    expect(t2).toBeDefined()
    expect(rollout.source).toBe('transcript')
    expect(closeTo(rollout.transcript_usd!, t2.costUSD), `${rollout.transcript_usd} vs ${t2.costUSD}`).toBe(true)
  })
})
