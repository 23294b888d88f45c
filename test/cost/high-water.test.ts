// Money once counted is never forgotten (issue 17, item 18): the ledger keeps, per coder session, the most it ever
// counted, on the run; a transcript truncated, replaced or removed still counts for that much. Haiku 4.5 input is $1
// a million tokens, Opus 4.1 output $75 a million (transcripts-and-pricing.md §5).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { raiseMarks } from '../../lib/cost/high-water.ts'
import { runStatePath } from '../../lib/ground/paths.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import { claudeProjectDir } from '../../lib/agents/locate.ts'
import type { ReviewerRound } from '../../lib/run/state.ts'
import { sandbox, tempDir } from '../_helpers.ts'
import { claudeAssistant, coderRound, makeRun, writeLines } from './_gen.ts'
import { claudeFolder, HAIKU, handOver, OPUS_41, writeSession } from './_spend.ts'

const SID = 'f0000000-0000-4000-8000-000000000001'
const iso = (h: number, m = 0) => `2026-01-05T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00.000Z`

function homes() {
  const root = tempDir('pl-high-water-')
  const repo = join(root, 'repo')
  mkdirSync(repo)
  const env = { CLAUDE_CONFIG_DIR: join(root, 'claude'), PAIR_LOOP_HOME: join(root, 'pl'), HOME: root }
  return { repo, env, transcript: join(claudeProjectDir(repo, env), `${SID}.jsonl`) }
}

/** A response of `input` Haiku tokens ($1 a million) or `output` Opus 4.1 tokens ($75 a million) at `ts`. */
const response = (n: number, ts: string, spend: { haiku?: number; opus?: number }) =>
  claudeAssistant({
    sessionId: SID,
    ts,
    id: `msg_hw_${n}`,
    requestId: `req_hw_${n}`,
    model: spend.opus ? OPUS_41 : HAIKU,
    usage: { input: spend.haiku ?? 0, output: spend.opus ?? 0, w5m: 0, w1h: 0, read: 0 },
  })

describe('the high-water mark per session', () => {
  it('a transcript truncated after budget-check saw $6 still counts $6: coder-done refuses on a $5 limit', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])
    const path = writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 6_000_000 }])
    expect((await sb.cli(['budget-check'])).code).toBe(13)
    const state = sb.state(start.json.run_id)
    expect(state.coder_high_water).toEqual({ [SID]: { [state.created_at]: { [HAIKU]: expect.any(Number) } } })
    expect(state.coder_high_water![SID]![state.created_at]![HAIKU]).toBeCloseTo(6, 12)

    writeFileSync(path, '')
    const refused = await handOver(sb)
    expect(refused.code, refused.stderr).toBe(13)
    expect(refused.json.errors[0].spent_usd).toBeCloseTo(6, 12)
  })

  it('the brake keeps what it saw: a transcript replaced by a smaller one after a refused coder-done still counts', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])).code).toBe(0)
    const path = writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 6_000_000 }])
    expect((await handOver(sb)).code).toBe(13)
    rmSync(path)
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 1_000_000 }])
    const check = await sb.cli(['budget-check'])
    expect(check.code).toBe(13)
    expect(check.json.spent).toBeCloseTo(6, 12)
    expect(check.stderr).toContain(`coder session ${SID}: $5.0000 counted before, no longer in its transcripts`)
  })

  it('finish keeps the marks too', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo'])
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 1_000_000 }])
    expect((await sb.cli(['finish', '--verdict', 'ABANDONED'])).code).toBe(0)
    const state = sb.state(start.json.run_id)
    expect(state.coder_high_water![SID]![state.created_at]![HAIKU]).toBeCloseTo(1, 12)
  })

  it('each round and model counts the larger of its mark and what is seen now; the mark is named as a source', () => {
    const { repo, env, transcript } = homes()
    writeLines(transcript, [
      response(1, iso(1, 30), { haiku: 1_000_000 }), // round 1: $1 now (its mark: $2)
      response(2, iso(2, 30), { opus: 40_000 }), // round 2: $3 now (its mark: $1.50)
    ])
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'coding',
      rounds: [coderRound(1, SID, iso(2))],
      coder_high_water: { [SID]: { [iso(1)]: { [HAIKU]: 2 }, [iso(2)]: { [OPUS_41]: 1.5 } } },
    })
    const ledger = computeLedger(run, { pricing: {}, env })
    expect(ledger.rounds.map((r) => [r.n, r.coder.usd])).toEqual([
      [1, 2],
      [2, 3],
    ])
    expect(ledger.by_model[HAIKU]!.usd).toBe(2)
    expect(ledger.spent_usd).toBeCloseTo(5, 12)
    expect(ledger.sources.find((s) => s.kind === 'state')).toMatchObject({ session: SID, status: 'recorded', usd: 1 })
  })

  it('a removed transcript still counts its mark', () => {
    const { repo, env } = homes()
    const run = makeRun({ repo, created_at: iso(1), coder_high_water: { [SID]: { [iso(1)]: { [HAIKU]: 4 } } } })
    expect(computeLedger(run, { pricing: {}, env }).spent_usd).toBe(4)
  })

  it('spend that moves from the last round to the next when a review comes back is not counted twice', () => {
    const { repo, env, transcript } = homes()
    writeLines(transcript, [response(1, iso(2, 30), { haiku: 1_000_000 })]) // after round 1's hand-over: $1
    const reviewing = makeRun({ repo, created_at: iso(1), phase: 'reviewing', rounds: [coderRound(1, SID, iso(2))] })
    const before = computeLedger(reviewing, { pricing: {}, env })
    expect(before.rounds.map((r) => [r.n, r.coder.usd])).toEqual([[1, 1]]) // the last round's tail
    const marks = raiseMarks(undefined, before.seen, new Set())
    const coding = { ...reviewing, phase: 'coding' as const, coder_high_water: marks! }
    const after = computeLedger(coding, { pricing: {}, env })
    expect(after.rounds.map((r) => [r.n, r.coder.usd])).toEqual([
      [1, 0],
      [2, 1],
    ])
    expect(after.spent_usd).toBe(1)
  })

  it("a session found to be a reviewer's loses its mark", () => {
    const { repo, env } = homes()
    const marks = { [SID]: { [iso(1)]: { [HAIKU]: 4 } } }
    const reviewer: ReviewerRound = {
      tool: 'claude',
      fallback_used: false,
      verdict: 'CHANGES_REQUESTED',
      findings: [],
      summary: '',
      session_id: SID,
      model: HAIKU,
      usage: null,
      cost: null,
      calls: 1,
      duration_ms: 1,
      raw_output_path: null,
      over_budget: false,
      at: iso(3),
    }
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'coding',
      rounds: [{ ...coderRound(1, null, iso(2)), reviewer }],
      coder_high_water: marks,
    })
    expect(computeLedger(run, { pricing: {}, env }).by_role.coder.usd).toBe(0)
    expect(raiseMarks(marks, {}, new Set([SID]))).toEqual({})
  })

  it("budget-check with no mark to raise does not take the run's lock (held elsewhere, it is not waited on)", async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '100'])
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 1_000_000 }])
    expect((await sb.cli(['budget-check'])).code).toBe(0) // raises the mark to $1
    mkdirSync(`${runStatePath(start.json.run_id, sb.home)}.lock`) // a live holder's lock, fresh
    const env = { PAIR_LOOP_LOCK_WAIT_MS: '3000' }
    const t = performance.now()
    const check = await sb.cli(['budget-check'], { env })
    expect(check.code, check.stderr).toBe(0)
    expect(check.json.spent).toBeCloseTo(1, 12)
    expect(performance.now() - t).toBeLessThan(2_500) // without the check first: the whole 3 s wait on the lock
  })

  it('a mark rises with what is seen, and is not written again when nothing rose', () => {
    const seen = { [SID]: { [iso(1)]: { [HAIKU]: 3 } } }
    expect(raiseMarks({ [SID]: { [iso(1)]: { [HAIKU]: 2 } } }, seen, new Set())).toEqual(seen)
    expect(raiseMarks({ [SID]: { [iso(1)]: { [HAIKU]: 5 } } }, seen, new Set())).toBeNull()
  })
})
