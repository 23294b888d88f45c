// The run's ledger: rounds at the coder-done times, the reviewer's calls, sources, and bad data that costs nothing.
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { coderSessionIds } from '../../lib/cost/coder.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import { claudeProjectDir } from '../../lib/agents/locate.ts'
import type { ReviewerRound } from '../../lib/run/state.ts'
import { tempDir } from '../_helpers.ts'
import {
  claudeAssistant,
  codexMeta,
  codexTokenCount,
  codexTurn,
  coderRound,
  makeRun,
  rolloutPath,
  writeLines,
} from './_gen.ts'

const HAIKU = 'claude-haiku-4-5-20251001'
const iso = (h: number, m = 0) => `2026-01-05T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00.000Z`

/** One Haiku response of `dollars` (a million input tokens per dollar). */
const response = (
  sid: string,
  ts: string,
  n: number,
  dollars = 1,
  extra: Partial<Parameters<typeof claudeAssistant>[0]> = {},
) =>
  claudeAssistant({
    sessionId: sid,
    ts,
    id: `msg_${sid.slice(0, 4)}_${n}`,
    requestId: `req_${n}`,
    model: HAIKU,
    usage: { input: dollars * 1_000_000, output: 0, w5m: 0, w1h: 0, read: 0 },
    ...extra,
  })

function homes() {
  const root = tempDir('pl-ledger-')
  const repo = join(root, 'repo')
  mkdirSync(repo)
  return {
    root,
    repo,
    env: {
      CLAUDE_CONFIG_DIR: join(root, 'claude'),
      CODEX_HOME: join(root, 'codex'),
      PAIR_LOOP_HOME: join(root, 'pl'),
      HOME: root,
    },
  }
}

function review(over: Partial<ReviewerRound> = {}): ReviewerRound {
  return {
    tool: 'codex',
    fallback_used: false,
    verdict: 'CHANGES_REQUESTED',
    findings: [],
    summary: '',
    session_id: null,
    model: 'gpt-5',
    calls: 1,
    usage: {
      input_tokens: 1000,
      output_tokens: 100,
      cached_input_tokens: 200,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_write_5m_tokens: 0,
      cache_write_1h_tokens: 0,
      reasoning_output_tokens: 0,
    },
    cost: {
      usd: 0.25,
      source: 'usage',
      models: { 'gpt-5': 0.25 },
      unpriced_models: [],
      transcript_usd: null,
      reported_usd: null,
    },
    duration_ms: 1,
    raw_output_path: null,
    over_budget: false,
    at: iso(3, 30),
    ...over,
  }
}

describe('ledger', () => {
  it('splits coder spend into rounds at the coder-done times, adds reviewer calls, and shows the round in progress', () => {
    const { repo, env } = homes()
    const sid = 'ffffffff-0000-4000-8000-000000000006'
    writeLines(join(claudeProjectDir(repo, env), `${sid}.jsonl`), [
      response(sid, iso(0, 30), 1, 100), // before the run started: not the run's
      response(sid, iso(1, 30), 2),
      response(sid, iso(2, 59), 3), // round 1
      response(sid, iso(3, 10), 4, 2), // round 2
      response(sid, iso(5, 0), 5, 4), // in progress (round 3)
    ])
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'coding',
      rounds: [
        { ...coderRound(1, sid, iso(3)), reviewer: review() },
        {
          ...coderRound(2, sid, iso(4)),
          reviewer: review({
            tool: 'claude',
            model: 'claude-sonnet-4-5-20250929',
            usage: null,
            cost: {
              usd: 0.5,
              source: 'reported',
              models: { 'claude-opus-5-5': 0 },
              unpriced_models: ['claude-opus-5-5'],
              transcript_usd: 0.4,
              reported_usd: 0.5,
            },
          }),
        },
      ],
      failed_reviews: [
        {
          at: iso(3, 20),
          round: 2,
          tool: 'codex',
          code: 'reviewer_failed',
          message: 'quota',
          cost: {
            usd: 0.125,
            source: 'usage',
            models: {},
            unpriced_models: [],
            transcript_usd: null,
            reported_usd: null,
          },
          raw_output_path: null,
          session_id: null,
        },
      ],
    })
    const ledger = computeLedger(run, { pricing: {}, env })
    expect(
      ledger.rounds.map((r) => [
        r.n,
        r.in_progress,
        r.coder.usd,
        r.reviewer.usd,
        r.reviewer.calls,
        r.reviewer.failed_calls,
      ]),
    ).toEqual([
      [1, false, 2, 0.25, 1, 0],
      [2, false, 2, 0.625, 2, 1],
      [3, true, 4, 0, 0, 0],
    ])
    expect(ledger.rounds[2]!.coder).toMatchObject({ from: iso(4), to: null })
    expect(ledger.spent_usd).toBeCloseTo(8.875, 12)
    expect(ledger.by_role.coder.usd).toBe(8)
    expect(ledger.by_role.coder.tokens.input).toBe(8_000_000)
    expect(ledger.by_role.reviewer).toMatchObject({ usd: 0.875, calls: 3, failed_calls: 1 })
    expect(ledger.by_role.reviewer.tokens).toMatchObject({ input: 800, cache_read: 200, output: 100 }) // codex semantics
    expect(ledger.by_model[HAIKU]).toMatchObject({ usd: 8, role: 'coder' })
    expect(ledger.by_model['gpt-5']).toMatchObject({ usd: 0.25, role: 'reviewer' })
    expect(ledger.unpriced_models).toEqual(['claude-opus-5-5'])
    expect(ledger.complete).toBe(false)
    expect(ledger.sources.filter((s) => s.role === 'reviewer').map((s) => [s.round, s.status, s.cost_source])).toEqual([
      [1, 'recorded', 'usage'],
      [2, 'recorded', 'reported'],
      [2, 'recorded', 'usage'],
    ])
  })

  it('a finished run counts coder spend up to the finish, the tail in its last round', () => {
    const { repo, env } = homes()
    const sid = 'ffffffff-0000-4000-8000-000000000007'
    writeLines(join(claudeProjectDir(repo, env), `${sid}.jsonl`), [
      response(sid, iso(1, 30), 1),
      response(sid, iso(2, 30), 2),
      response(sid, iso(3, 30), 3, 8),
    ])
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'finished',
      rounds: [coderRound(1, sid, iso(2))],
      outcome: { verdict: 'ABANDONED', finished_at: iso(3) },
    })
    const ledger = computeLedger(run, { pricing: {}, env })
    expect(ledger.rounds.map((r) => [r.n, r.in_progress, r.coder.usd])).toEqual([[1, false, 2]])
    expect(ledger.rounds[0]!.coder).toMatchObject({ from: iso(1), to: iso(3) })
    expect(ledger.complete).toBe(true)
  })

  it("counts the PR's final round (review --pr) as reviewer spend in the run's last round", () => {
    const { repo, env } = homes()
    const run = makeRun({ repo, created_at: iso(1), phase: 'finished', rounds: [coderRound(1, null, iso(2))] })
    const final = {
      tool: 'custom' as const,
      fallback_used: false,
      verdict: 'APPROVED' as const,
      findings: [],
      summary: '',
      session_id: null,
      model: null,
      usage: null,
      cost: {
        usd: 0.25,
        source: 'reported',
        models: {},
        unpriced_models: [],
        transcript_usd: null,
        reported_usd: 0.25,
      },
      calls: 1,
      duration_ms: 1,
      raw_output_path: null,
      over_budget: false,
      at: iso(3),
    }
    const ledger = computeLedger({ ...run, final_review: { review: final, diff_path: null } }, { pricing: {}, env })
    expect(ledger.by_role.reviewer.usd).toBe(0.25)
    expect(ledger.rounds.map((r) => [r.n, r.reviewer.usd])).toEqual([[1, 0.25]])
  })

  it("finds every session in the repo's folder changed since the start (an mtime set back too), never a reviewer's", () => {
    const { repo, env } = homes()
    const dir = claudeProjectDir(repo, env)
    const old = 'a0000000-0000-4000-8000-000000000001'
    const coder = 'a0000000-0000-4000-8000-000000000002'
    const reviewer = 'a0000000-0000-4000-8000-000000000003'
    for (const [sid, seconds] of [
      [old, 1000],
      [coder, 2000],
      [reviewer, 3000],
    ] as const) {
      writeLines(join(dir, `${sid}.jsonl`), [response(sid, iso(2), 1)])
      utimesSync(
        join(dir, `${sid}.jsonl`),
        new Date(Date.parse(iso(0)) + seconds * 1000),
        new Date(Date.parse(iso(0)) + seconds * 1000),
      )
    }
    utimesSync(join(dir, `${old}.jsonl`), new Date(Date.parse(iso(0))), new Date(Date.parse(iso(0))))
    const run = makeRun({
      repo,
      created_at: iso(0, 5),
      phase: 'reviewing',
      rounds: [{ ...coderRound(1, coder, iso(1)), reviewer: null }],
    })
    // recorded first, then newest first; the reviewer's session is not known yet, and `old` changed (ctime) since
    expect(coderSessionIds(run, env)).toEqual([coder, reviewer, old])
    run.failed_reviews.push({
      at: iso(1),
      round: 1,
      tool: 'claude',
      code: 'reviewer_failed',
      message: 'x',
      cost: null,
      raw_output_path: null,
      session_id: reviewer,
    })
    expect(coderSessionIds(run, env)).toEqual([coder, old])
  })

  it("includes a Claude session's subagent transcripts", () => {
    const { repo, env } = homes()
    const sid = 'ffffffff-0000-4000-8000-000000000008'
    const dir = claudeProjectDir(repo, env)
    writeLines(join(dir, `${sid}.jsonl`), [response(sid, iso(2), 1)])
    writeLines(join(dir, sid, 'subagents', 'agent-01.jsonl'), [
      response(sid, iso(2), 2, 3, { sidechain: true }),
      response(sid, iso(2), 1, 5, { sidechain: true }),
    ])
    const ledger = computeLedger(
      makeRun({ repo, created_at: iso(1), rounds: [coderRound(1, sid, iso(3))], phase: 'reviewing' }),
      { pricing: {}, env },
    )
    expect(ledger.by_role.coder.usd).toBe(4) // the sidechain replay of msg 1 does not count again
    expect(ledger.sources.map((s) => s.path?.split('/').slice(-2).join('/'))).toEqual([
      `${dir.split('/').at(-1)}/${sid}.jsonl`,
      'subagents/agent-01.jsonl',
    ])
  })
})

describe('bad data costs nothing, is listed with why, and never crashes', () => {
  it('garbage, wrong shapes, a missing transcript, an unreadable one', () => {
    const { repo, env } = homes()
    const dir = claudeProjectDir(repo, env)
    const good = 'b0000000-0000-4000-8000-000000000001'
    const missing = 'b0000000-0000-4000-8000-000000000002'
    const unreadable = 'b0000000-0000-4000-8000-000000000003'
    const wrong = response(good, iso(2), 2) as any
    wrong.message.usage.output_tokens = 'lots'
    const noTime = response(good, iso(2), 3) as any
    delete noTime.timestamp
    writeLines(join(dir, `${good}.jsonl`), [
      'this is not json at all',
      '{"type":"assistant","message":{"usage":',
      '[1,2,3]',
      wrong,
      noTime,
      response(good, iso(2), 4, 1, { version: 'not-semver' }),
      response(good, iso(2), 5),
    ])
    writeFileSync(join(dir, `${good}.jsonl`), Buffer.from([0xff, 0xfe, 0x7b, 0x0a]), { flag: 'a' }) // invalid UTF-8
    mkdirSync(join(dir, `${unreadable}.jsonl`)) // a directory where the file should be
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'reviewing',
      rounds: [coderRound(1, good, iso(3)), coderRound(2, missing, iso(3, 1)), coderRound(3, unreadable, iso(3, 2))],
    })
    const ledger = computeLedger(run, { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBe(1)
    expect(ledger.complete).toBe(false)
    const [read, miss, bad] = ledger.sources
    expect(read).toMatchObject({ session: good, status: 'read', entries: 1 })
    expect(read!.skipped!.map((s) => [s.reason, s.count, s.first_line])).toEqual([
      ['not a JSON object', 3, 1], // lines 1, 3 and the invalid UTF-8 one
      ['not valid JSON', 1, 2],
      ['assistant line of the wrong shape: usage.output_tokens', 1, 4],
      ['assistant line of the wrong shape: timestamp', 1, 5],
      ['assistant line of the wrong shape: version', 1, 6],
    ])
    expect(read!.why).toContain('skipped')
    expect(miss).toMatchObject({ session: missing, status: 'missing', path: null })
    expect(miss!.why).toContain(`${missing}.jsonl`)
    expect(bad).toMatchObject({ session: unreadable, status: 'unreadable', why: 'not a regular file' })
  })

  it('no session at all', () => {
    const { repo, env } = homes()
    const ledger = computeLedger(makeRun({ repo }), { pricing: {}, env })
    expect(ledger).toMatchObject({ spent_usd: 0, complete: false })
    expect(ledger.sources).toEqual([
      expect.objectContaining({ role: 'coder', status: 'missing', why: expect.stringContaining('no claude session') }),
    ])
  })

  it('a Codex rollout with no model: its usage is listed as not priced, not guessed', () => {
    const { repo, env } = homes()
    const thread = '01a2b3c4-0000-7000-8000-0000000000bb'
    const t = { input: 1000, cached: 0, output: 100, reasoning: 0 }
    const t2 = { input: 2000, cached: 0, output: 200, reasoning: 0 }
    writeLines(rolloutPath(env.CODEX_HOME, thread), [
      codexMeta(thread, iso(2)),
      'garbage',
      codexTokenCount(iso(2, 1), t, t),
      codexTurn('gpt-5', iso(2, 2)),
      codexTokenCount(iso(2, 3), t2, t),
    ])
    const ledger = computeLedger(
      makeRun({
        repo,
        coder: 'codex',
        created_at: iso(1),
        rounds: [coderRound(1, thread, iso(3))],
        phase: 'reviewing',
      }),
      { pricing: {}, env },
    )
    expect(ledger.by_role.coder.usd).toBeCloseTo((1000 * 1.25 + 100 * 10) / 1e6, 12)
    expect(ledger.sources[0]!.skipped!.map((s) => s.reason)).toEqual([
      'not a JSON object',
      'token usage before any model was named (no turn_context): not priced',
    ])
  })
})
