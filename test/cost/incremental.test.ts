// Reading transcripts that are still being written: whole lines only, each counted once, appended bytes only.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cacheFileFor, deltaFileFor } from '../../lib/cost/transcript-cache-file.ts'
import { dedupeClaude, scanClaude } from '../../lib/cost/claude.ts'
import { scanCodex } from '../../lib/cost/codex.ts'
import { priceBook } from '../../lib/cost/pricing.ts'
import { tempDir } from '../_helpers.ts'
import { claudeAssistant, codexMeta, codexTokenCount, codexTurn, writeLines } from './_gen.ts'

const SID = 'dddddddd-0000-4000-8000-000000000004'
const ts = (s: number) => new Date(Date.parse('2026-01-05T09:00:00.000Z') + s * 1000).toISOString()
const line = (n: number, output = 100) =>
  `${JSON.stringify(
    claudeAssistant({
      sessionId: SID,
      ts: ts(n),
      id: `msg_${n}`,
      requestId: `req_${n}`,
      model: 'claude-haiku-4-5-20251001',
      usage: { input: 1_000_000, output, w5m: 0, w1h: 0, read: 0 },
    }),
  )}\n`
// Haiku 4.5: $1 per million input → each response costs 1 + output × 5e-6
const usd = (path: string, cache: string | null) =>
  dedupeClaude([scanClaude(path, cache)], priceBook()).reduce((sum, item) => sum + item.usd, 0)

function setup() {
  const dir = tempDir('pl-incr-')
  const cache = join(dir, 'cache')
  const path = join(dir, 'projects', 'p', `${SID}.jsonl`)
  mkdirSync(join(dir, 'projects', 'p'), { recursive: true })
  return { dir, cache, path }
}

describe('incremental reading', () => {
  it('does not count a line being written until it is complete, then counts it exactly once', () => {
    const { cache, path } = setup()
    const whole = line(1) + line(2)
    const third = line(3)
    writeFileSync(path, whole + third.slice(0, 40)) // the writer is half-way through line 3
    const first = scanClaude(path, cache)
    expect(first.count).toBe(2)
    expect(first.offset).toBe(Buffer.byteLength(whole))
    expect(first.pending_bytes).toBe(40)
    expect(usd(path, cache)).toBeCloseTo(2.001, 12)

    // nothing changed: nothing is read
    expect(scanClaude(path, cache)).toMatchObject({ count: 2, read_bytes: 0, from_cache: true })

    appendFileSync(path, third.slice(40, 200)) // still unfinished
    expect(scanClaude(path, cache).count).toBe(2)
    appendFileSync(path, third.slice(200)) // now complete, with its newline
    const done = scanClaude(path, cache)
    expect(done).toMatchObject({ count: 3, pending_bytes: 0, from_cache: true })
    expect(usd(path, cache)).toBeCloseTo(3.0015, 12)
    expect(scanClaude(path, cache).count).toBe(3) // and never again
    expect(usd(path, cache)).toBeCloseTo(3.0015, 12)
  })

  it('a line without its newline at the end of the file waits for the newline', () => {
    const { cache, path } = setup()
    writeFileSync(path, line(1) + line(2).trimEnd())
    expect(scanClaude(path, cache).count).toBe(1)
    appendFileSync(path, '\n')
    expect(scanClaude(path, cache).count).toBe(2)
  })

  it('reads a line longer than its read buffer (a large tool result or edit)', () => {
    const { cache, path } = setup()
    writeFileSync(path, line(1))
    expect(scanClaude(path, cache).count).toBe(1)
    const big = claudeAssistant({
      sessionId: SID,
      ts: ts(2),
      id: 'msg_big',
      requestId: 'req_big',
      model: 'claude-haiku-4-5-20251001',
      usage: { input: 1_000_000, output: 0, w5m: 0, w1h: 0, read: 0 },
      block: 'x'.repeat(300_000),
    })
    appendFileSync(path, `${JSON.stringify(big)}\n${line(3)}`)
    expect(scanClaude(path, cache)).toMatchObject({ count: 3, pending_bytes: 0 })
    expect(usd(path, cache)).toBeCloseTo(3.001, 12)
    expect(scanClaude(path, null).count).toBe(3)
  })

  it('reads only the appended bytes on a warm check', () => {
    const { cache, path } = setup()
    let text = ''
    for (let i = 0; i < 200; i++) text += line(i)
    writeFileSync(path, text)
    const cold = scanClaude(path, cache)
    expect(cold).toMatchObject({ count: 200, read_bytes: Buffer.byteLength(text), from_cache: false })
    const more = line(500) + line(501)
    appendFileSync(path, more)
    const warm = scanClaude(path, cache)
    expect(warm).toMatchObject({ count: 202, read_bytes: Buffer.byteLength(more), from_cache: true, lines: 202 })
    // one cache for the transcript: its base, and a delta with what the warm check added
    const base = cacheFileFor(cache, 'claude', path)
    expect(readdirSync(join(cache, 'transcripts')).sort()).toEqual(
      [basename(base), basename(deltaFileFor(base))].sort(),
    )
  })

  it('writes what changed as a delta over the base, and a new base once the delta has grown', () => {
    const { cache, path } = setup()
    const base = cacheFileFor(cache, 'claude', path)
    writeFileSync(path, line(0))
    scanClaude(path, cache)
    const first = statSync(base).ino
    for (let i = 1; i <= 40; i++) {
      appendFileSync(path, line(i))
      scanClaude(path, cache)
    }
    expect(statSync(base).ino).toBe(first) // 40 small checks: the base untouched
    expect(existsSync(deltaFileFor(base))).toBe(true)
    let text = ''
    for (let i = 100; i < 5000; i++) text += line(i)
    appendFileSync(path, text) // more than a delta holds
    expect(scanClaude(path, cache).count).toBe(4941)
    expect(statSync(base).ino).not.toBe(first)
    expect(existsSync(deltaFileFor(base))).toBe(false)
    expect(usd(path, cache)).toBeCloseTo(usd(path, null), 9)
  })

  it('ignores a delta that names another base, and reads on from the base', () => {
    const { cache, path } = setup()
    const base = cacheFileFor(cache, 'claude', path)
    writeFileSync(path, line(1) + line(2))
    scanClaude(path, cache)
    appendFileSync(path, line(3))
    scanClaude(path, cache) // a delta over the first base
    const stale = readFileSync(deltaFileFor(base))
    truncateSync(path, 0) // rewritten: a new base, no delta
    writeFileSync(path, line(7, 1) + line(8, 1))
    expect(scanClaude(path, cache)).toMatchObject({ count: 2, from_cache: false })
    writeFileSync(deltaFileFor(base), stale) // a delta left from before (a crash between the two writes)
    appendFileSync(path, line(9, 1))
    expect(scanClaude(path, cache)).toMatchObject({ count: 3, from_cache: true })
    expect(usd(path, cache)).toBeCloseTo(3.000015, 12)
  })

  it('a corrupt delta only costs reading again from where the base left off', () => {
    const { cache, path } = setup()
    const base = cacheFileFor(cache, 'claude', path)
    writeFileSync(path, line(1) + line(2))
    scanClaude(path, cache)
    appendFileSync(path, line(3))
    scanClaude(path, cache)
    for (const garbage of [
      Buffer.from('PLD4 garbage'),
      Buffer.alloc(0),
      readFileSync(deltaFileFor(base)).subarray(0, 50),
    ]) {
      writeFileSync(deltaFileFor(base), garbage)
      expect(scanClaude(path, cache)).toMatchObject({ count: 3, from_cache: true })
      expect(usd(path, cache)).toBeCloseTo(3.0015, 12)
    }
  })

  it('reduces copies of a response as it reads, the same in one pass or across many appends (thousands of responses)', () => {
    const { cache, path } = setup()
    // 3000 responses, each written as two content blocks and a partial early copy, in shuffled chunks
    const copies: string[] = []
    for (let i = 0; i < 3000; i++) {
      const full = claudeAssistant({
        sessionId: SID,
        ts: ts(i),
        id: `msg_${i}`,
        requestId: `req_${i}`,
        model: 'claude-haiku-4-5-20251001',
        usage: { input: 1000, output: 100 + (i % 7), w5m: 0, w1h: 0, read: 0 },
      })
      const partial = claudeAssistant({
        sessionId: SID,
        ts: ts(i),
        id: `msg_${i}`,
        requestId: `req_${i}`,
        model: 'claude-haiku-4-5-20251001',
        usage: { input: 1000, output: 1, w5m: 0, w1h: 0, read: 0 },
      })
      copies.push(`${JSON.stringify(partial)}\n`, `${JSON.stringify(full)}\n`, `${JSON.stringify(full)}\n`)
    }
    let expected = 0
    for (let i = 0; i < 3000; i++) expected += (1000 * 1 + (100 + (i % 7)) * 5) / 1e6
    const text = copies.join('')
    writeFileSync(path, '')
    let at = 0
    for (const size of [1, 50_000, 333_333, 10, 700_000]) {
      appendFileSync(path, text.slice(at, at + size))
      at += size
      scanClaude(path, cache)
    }
    appendFileSync(path, text.slice(at))
    const warm = scanClaude(path, cache)
    expect(warm.count).toBe(3000)
    expect(usd(path, cache)).toBeCloseTo(expected, 9)
    const cold = scanClaude(path, null)
    expect(cold.count).toBe(3000)
    expect(Array.from(cold.numbers)).toEqual(Array.from(warm.numbers))
  })

  it('reads a truncated, replaced or rewritten file again from the start', () => {
    const { cache, path, dir } = setup()
    writeFileSync(path, line(1) + line(2) + line(3))
    expect(scanClaude(path, cache).count).toBe(3)

    truncateSync(path, Buffer.byteLength(line(1))) // shorter than what was counted
    expect(scanClaude(path, cache)).toMatchObject({ count: 1, from_cache: false })

    // replaced by another file (new inode) that happens to be longer
    const other = join(dir, 'other.jsonl')
    writeFileSync(other, line(7, 1) + line(8, 1) + line(9, 1))
    renameSync(other, path)
    const replaced = scanClaude(path, cache)
    expect(replaced).toMatchObject({ count: 3, from_cache: false })
    expect(usd(path, cache)).toBeCloseTo(3.000015, 12)

    // rewritten in place with different bytes before the offset, then grown
    writeFileSync(path, line(4, 2) + line(5, 2) + line(6, 2) + line(10, 2))
    expect(scanClaude(path, cache)).toMatchObject({ count: 4, from_cache: false })
    expect(usd(path, cache)).toBeCloseTo(4.00004, 12)
  })

  it('a corrupt or foreign cache file only costs a full read', () => {
    const { cache, path } = setup()
    writeFileSync(path, line(1) + line(2))
    scanClaude(path, cache)
    const file = cacheFileFor(cache, 'claude', path)
    writeFileSync(file, 'PLC1 garbage')
    expect(scanClaude(path, cache)).toMatchObject({ count: 2, from_cache: false })
    writeFileSync(file, Buffer.alloc(3))
    expect(scanClaude(path, cache)).toMatchObject({ count: 2, from_cache: false })
    // an unwritable cache directory: still counted
    expect(scanClaude(path, join(path, 'not-a-dir'))).toMatchObject({ count: 2 })
  })

  it('keeps the Codex delta state across checks (a re-emit after the offset still costs nothing)', () => {
    const dir = tempDir('pl-incr-codex-')
    const path = join(dir, 'rollout.jsonl')
    const total1 = { input: 1000, cached: 200, output: 100, reasoning: 40 }
    const total2 = { input: 3000, cached: 1200, output: 300, reasoning: 100 }
    writeLines(path, [codexMeta('t', ts(0)), codexTurn('gpt-5-codex', ts(0)), codexTokenCount(ts(1), total1, total1)])
    expect(scanCodex(path, join(dir, 'cache')).count).toBe(1)
    writeLines(
      path,
      [
        codexTokenCount(ts(2), total1, total1),
        codexTokenCount(ts(3), null),
        codexTokenCount(ts(4), total2, { input: 2000, cached: 1000, output: 200, reasoning: 60 }),
      ],
      { append: true },
    )
    const warm = scanCodex(path, join(dir, 'cache'))
    expect(warm).toMatchObject({ count: 2, from_cache: true })
  })
})
