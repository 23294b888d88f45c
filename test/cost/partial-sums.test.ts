// The sums a transcript's cache keeps: a warm check adds only what is new, and its figures equal, to the bit, a check
// that reads and sums everything again (no cache), through appends, replaced copies, new rounds and new prices.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeParser, scanClaude, sumClaudeFile } from '../../lib/cost/claude.ts'
import { codexParser, scanCodex, sumCodexFile } from '../../lib/cost/codex.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import type { Ledger } from '../../lib/cost/ledger-types.ts'
import { claudeProjectDir } from '../../lib/agents/locate.ts'
import { priceBook } from '../../lib/cost/pricing.ts'
import { type PartialSums, UNSETTLED, type UsageSums, sumsKey } from '../../lib/cost/sums.ts'
import { cacheFileFor, loadCache } from '../../lib/cost/transcript-cache-file.ts'
import type { RunState } from '../../lib/run/state.ts'
import { tempDir } from '../_helpers.ts'
import {
  CLAUDE_MODELS,
  claudeAssistant,
  codexMeta,
  codexTokenCount,
  codexTurn,
  coderRound,
  makeRun,
  rng,
  rolloutPath,
} from './_gen.ts'

const T0 = Date.parse('2026-01-05T09:00:00.000Z')
const at = (s: number) => new Date(T0 + s * 1000).toISOString()

/** The figures a check reports (sources differ on purpose: bytes read, from the cache or not). */
const figures = (ledger: Ledger) => ({
  spent: ledger.spent_usd,
  by_role: ledger.by_role,
  rounds: ledger.rounds,
  by_model: ledger.by_model,
  unpriced: ledger.unpriced_models,
  complete: ledger.complete,
})

function homes() {
  const root = tempDir('pl-sums-')
  const repo = join(root, 'repo')
  mkdirSync(repo)
  const env = {
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    PAIR_LOOP_HOME: join(root, 'pl'),
    HOME: root,
  }
  return { repo, env }
}

/**
 * A Claude session of `n` responses: each in 1–3 content blocks, some after a partial early copy, some replayed on a
 * sidechain first and written for real far later (so an entry the cache has summed is replaced), some without a
 * model or a message id, models added as the session goes on, a few responses before the run started. Without
 * `replaceOld`, a response's copies are written together (no entry changes once later ones are written).
 */
function claudeSession(sid: string, n: number, seed: number, replaceOld = true): string[] {
  const r = rng(seed)
  const lines: string[] = []
  const late: Array<[number, string]> = [] // [position, line] written later
  for (let i = 0; i < n; i++) {
    const model = i % 97 === 13 ? undefined : CLAUDE_MODELS[Math.min(CLAUDE_MODELS.length - 1, Math.floor(i / (n / 4)))]
    const usage = {
      input: r.int(1, 40),
      output: r.int(10, 900),
      w5m: r.int(0, 3000),
      w1h: r.int(0, 900),
      read: r.int(0, 90_000),
    }
    const line = (extra: Partial<Parameters<typeof claudeAssistant>[0]> = {}) =>
      JSON.stringify(
        claudeAssistant({
          sessionId: sid,
          ts: at(i - 5),
          id: `msg_${i}`,
          requestId: `req_${i}`,
          model: model!,
          usage,
          ...extra,
        }),
      )
    if (replaceOld && i % 53 === 7) {
      lines.push(line({ sidechain: true, requestId: `req_side_${i}` }))
      late.push([i + r.int(UNSETTLED + 10, UNSETTLED + 80), line()])
      continue
    }
    if (r.chance(0.1)) lines.push(line({ usage: { ...usage, output: 1 } }))
    if (replaceOld && i % 41 === 3)
      late.push([i + UNSETTLED + 20, line({ usage: { ...usage, output: usage.output + 5 } })])
    for (let b = r.int(1, 3); b > 0; b--) lines.push(line(i % 89 === 5 ? { id: undefined } : {}))
    while (late.length && late[0]![0] <= i) lines.push(late.shift()![1])
  }
  for (const [, line] of late) lines.push(line)
  return lines
}

/** A Codex rollout of `n` token counts (re-emits and info:null between), the model changing as it goes on. */
function codexRollout(id: string, n: number, seed: number, cwd: string): string[] {
  const r = rng(seed)
  const lines = [JSON.stringify(codexMeta(id, at(0), { cwd })), JSON.stringify(codexTurn('gpt-5-codex', at(0)))]
  const total = { input: 0, cached: 0, output: 0, reasoning: 0 }
  for (let i = 0; i < n; i++) {
    if (i === Math.floor(n / 2)) lines.push(JSON.stringify(codexTurn('gpt-5.5', at(i))))
    const last = { input: r.int(1000, 200_000), cached: 0, output: r.int(10, 5000), reasoning: 0 }
    last.cached = r.int(0, last.input)
    last.reasoning = r.int(0, last.output)
    for (const key of Object.keys(total) as Array<keyof typeof total>) total[key] += last[key]
    lines.push(JSON.stringify(codexTokenCount(at(i), { ...total }, last)))
    if (r.chance(0.2)) lines.push(JSON.stringify(codexTokenCount(at(i), { ...total }, last)))
    if (r.chance(0.2)) lines.push(JSON.stringify(codexTokenCount(at(i), null)))
  }
  return lines
}

interface Case {
  name: string
  coder: 'claude' | 'codex'
  lines: (repo: string) => string[]
  file: (repo: string, env: Record<string, string>) => string
}

const SID = 'eeeeeeee-0000-4000-8000-000000000005'
const THREAD = '01a2b3c4-0000-7000-8000-0000000000aa'
const CASES: Case[] = [
  {
    name: 'a Claude session (copies, sidechain replays replaced much later, no-model lines, new models)',
    coder: 'claude',
    lines: () => claudeSession(SID, 1500, 7),
    file: (repo, env) => join(claudeProjectDir(repo, env), `${SID}.jsonl`),
  },
  {
    name: 'a Codex rollout (re-emits, info:null, a model change)',
    coder: 'codex',
    lines: (repo) => codexRollout(THREAD, 800, 11, repo),
    file: (_repo, env) => rolloutPath(env.CODEX_HOME!, THREAD),
  },
]

describe('the sums kept in a transcript cache', () => {
  it.each(CASES)('equal a full re-sum after every append, new round and price change: $name', (c) => {
    const { repo, env } = homes()
    const file = c.file(repo, env)
    mkdirSync(join(file, '..'), { recursive: true })
    writeFileSync(file, '')
    const session = c.coder === 'claude' ? SID : THREAD
    const text = `${c.lines(repo).join('\n')}\n`
    const duration = 1600 // seconds the responses span
    let run: RunState = makeRun({ repo, coder: c.coder, created_at: at(0), rounds: [coderRound(1, session, at(300))] })
    run = { ...run, phase: 'reviewing' }
    let pricing = {}
    const r = rng(3)
    let written = 0
    for (let step = 0; written < text.length; step++) {
      const size = step === 0 ? 1 : r.int(1, Math.ceil(text.length / 6))
      appendFileSync(file, text.slice(written, written + size)) // often ends mid-line
      written += size
      if (step === 3) run = { ...run, rounds: [...run.rounds, coderRound(2, session, at(duration / 2))] }
      if (step === 5)
        pricing = { 'claude-haiku-4-5-20251001': { input: 2, output: 9 }, 'gpt-5.5': { input: 4, output: 20 } }
      if (step === 6)
        run = { ...run, outcome: { verdict: 'APPROVED', finished_at: at(duration - 200) }, phase: 'finished' }
      const warm = computeLedger(run, { pricing, env })
      const cold = computeLedger(run, { pricing, env, cache: false })
      expect(figures(warm), `after ${written} of ${text.length} bytes`).toEqual(figures(cold))
      // byte for byte, as budget-check prints them (models listed in the same order)
      expect(JSON.stringify(figures(warm))).toBe(JSON.stringify(figures(cold)))
    }
    const parser = c.coder === 'claude' ? claudeParser : codexParser(env)
    const cached = loadCache(cacheFileFor(join(env.PAIR_LOOP_HOME, 'cache'), c.coder, file), parser, file, () => 0)
    const sums = cached?.header.sums as { upTo: number } | null
    expect(sums?.upTo).toBe(cached!.header.count - UNSETTLED) // all but the latest entries are kept summed
  })
})

const byModel = (kept: PartialSums) => ({
  upTo: kept.upTo,
  key: kept.key,
  models: Object.fromEntries(kept.models.map((model, i) => [model, { priced: kept.priced[i], data: kept.data[i] }])),
})

describe('sums going on from a saved state', () => {
  const bounds = [T0, T0 + 300_000, T0 + 800_000, Number.POSITIVE_INFINITY]
  const prices = priceBook()
  const key = sumsKey(bounds, prices.key)
  const SUMMERS = [
    {
      name: 'Claude (a response without a model early, new models later)',
      kind: 'claude' as const,
      lines: () => claudeSession(SID, 1200, 5, false),
      scan: (path: string) => scanClaude(path, null),
      sum: sumClaudeFile,
    },
    {
      name: 'Codex',
      kind: 'codex' as const,
      lines: () => codexRollout(THREAD, 600, 13, '/repo'),
      scan: (path: string) => scanCodex(path, null, {}),
      sum: sumCodexFile,
    },
  ]
  it.each(SUMMERS)('equal, to the bit and in the same model order, sums taken from the first entry: $name', (c) => {
    const path = join(tempDir('pl-sums-direct-'), `${c.kind}.jsonl`)
    const lines = c.lines()
    let saved: PartialSums | null = null
    let resumed = 0
    for (let end = 40; end < lines.length + 40; end += 97) {
      writeFileSync(path, `${lines.slice(0, end).join('\n')}\n`)
      const scan = c.scan(path)
      const goingOn: { sums: UsageSums; keep: PartialSums } = c.sum(scan, prices, bounds, key, saved)
      const fresh = c.sum(scan, prices, bounds, key, null)
      expect(JSON.stringify(goingOn.sums)).toBe(JSON.stringify(fresh.sums))
      // the state kept holds the same numbers (its model order is the order models were first seen in)
      expect(byModel(goingOn.keep)).toEqual(byModel(fresh.keep))
      if (saved && saved.upTo > 0) resumed++
      saved = goingOn.keep
    }
    expect(resumed).toBeGreaterThan(5)
  })

  it('a saved state under another key (other windows or prices) is not used', () => {
    const path = join(tempDir('pl-sums-key-'), 'claude.jsonl')
    writeFileSync(path, `${claudeSession(SID, 300, 9, false).join('\n')}\n`)
    const scan = scanClaude(path, null)
    const other = sumClaudeFile(
      scan,
      priceBook({ 'claude-haiku-4-5-20251001': { input: 9, output: 9 } }),
      bounds,
      'x',
      null,
    )
    const fresh = sumClaudeFile(scan, prices, bounds, key, null)
    expect(JSON.stringify(sumClaudeFile(scan, prices, bounds, key, other.keep).sums)).toBe(JSON.stringify(fresh.sums))
  })
})
