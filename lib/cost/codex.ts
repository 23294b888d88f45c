// Codex CLI rollouts: the token_count delta rule (re-emits and `info: null` cost nothing), model from turn_context.
import { closeSync, openSync, readSync } from 'node:fs'
import { jsonObjectLine, type LineParser } from './line-reader.ts'
import { codexRolloutForThread } from '../agents/locate.ts'
import { UNKNOWN_MODEL, codexCost, codexTokens, type PriceBook } from './pricing.ts'
import { type PartialSums, resumeSums, type UsageItem, type UsageVisitor, type UsageSums, collect } from './sums.ts'
import { scanFile, type ScanResult, type SumsHook } from './transcript-cache.ts'
import { context } from '../ground/context.ts'

// Entry layout: timestamp ms, model index, input (incl. cached and writes), cached, cache writes, output (incl.
// reasoning), reasoning, 0.
const WIDTH = 8

/** Cumulative usage in a fixed order: input, cached, output, reasoning, writes. */
type Totals = [number, number, number, number, number]

interface CodexState {
  model: string | null
  prev: Totals | null
  lines: number
  fork: null | {
    parent: string
    mode: 'prefix' | 'burst' | null
    parentTotals: string[] | null
    second: number | null
    done: boolean
  }
}

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0)

function totals(u: unknown): Totals | null | 'bad' {
  if (u === undefined || u === null) return null
  if (typeof u !== 'object' || Array.isArray(u)) return 'bad'
  const o = u as Record<string, unknown>
  for (const key of [
    'input_tokens',
    'cached_input_tokens',
    'output_tokens',
    'reasoning_output_tokens',
    'cache_write_input_tokens',
  ]) {
    if (o[key] !== undefined && (typeof o[key] !== 'number' || !Number.isFinite(o[key]) || (o[key] as number) < 0))
      return 'bad'
  }
  return [
    count(o.input_tokens),
    count(o.cached_input_tokens ?? o.cache_read_input_tokens),
    count(o.output_tokens),
    count(o.reasoning_output_tokens),
    count(o.cache_write_input_tokens),
  ]
}

const sig = (t: Totals) => t.join(',')
const same = (a: Totals, b: Totals) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4]

/** The parser, bound to where a forked rollout's parent is looked up. */
export function codexParser(env: NodeJS.ProcessEnv = context().env): LineParser<CodexState> {
  return {
    kind: 'codex',
    version: 1,
    width: WIDTH,
    patterns: ['"token_count"', '"turn_context"', '"session_meta"'],
    init: () => ({ model: null, prev: null, lines: 0, fork: null }),
    parse(line, state, sink, lineNo) {
      const o = jsonObjectLine(line, sink)
      if (o === undefined) return
      const p = o.payload
      if (o.type === 'session_meta') {
        if (lineNo !== 1 || !p || typeof p !== 'object') return
        const parent = p.forked_from_id ?? p.source?.subagent?.thread_spawn?.parent_thread_id
        if (typeof parent === 'string' && parent)
          state.fork = { parent, mode: null, parentTotals: null, second: null, done: false }
        return
      }
      if (o.type === 'turn_context') {
        if (p && typeof p.model === 'string' && p.model) state.model = p.model
        return
      }
      if (o.type !== 'event_msg' || !p || p.type !== 'token_count') return
      const info = p.info
      if (info === null || info === undefined) return // rate limits only
      if (typeof info !== 'object') return sink.skip('token_count of the wrong shape: info')
      const total = totals(info.total_token_usage)
      const last = totals(info.last_token_usage)
      if (total === 'bad' || last === 'bad') return sink.skip('token_count of the wrong shape: token usage')
      const ts = typeof o.timestamp === 'string' ? Date.parse(o.timestamp) : NaN
      if (Number.isNaN(ts)) return sink.skip('token_count of the wrong shape: timestamp')

      // A fork starts by replaying its parent's usage: skip the leading events the parent already counted.
      const fork = state.fork
      if (fork && !fork.done) {
        if (fork.mode === null) {
          const parentPath = codexRolloutForThread(fork.parent, env)
          const parentTotals = parentPath ? rolloutTotals(parentPath) : null
          fork.mode = parentTotals ? 'prefix' : 'burst'
          fork.parentTotals = parentTotals
        }
        let replayed: boolean
        if (fork.mode === 'prefix') replayed = total !== null && fork.parentTotals!.includes(sig(total))
        else {
          const second = Math.floor(ts / 1000)
          fork.second ??= second // the burst is the events of the first second
          replayed = fork.second === second
        }
        if (replayed) {
          if (total) state.prev = total
          return
        }
        fork.done = true
        fork.parentTotals = null
      }

      const advanced = total === null || state.prev === null || !same(total, state.prev)
      let delta: Totals
      if (advanced && last) delta = last
      else if (total) {
        const prev = state.prev ?? [0, 0, 0, 0, 0]
        delta = total.map((n, i) => Math.max(0, n - prev[i]!)) as Totals
      } else return
      if (total) state.prev = total
      if (delta.every((n) => n === 0)) return
      const model = typeof info.model === 'string' && info.model ? info.model : state.model
      if (!model) return sink.skip('token usage before any model was named (no turn_context): not priced')
      const input = delta[0]
      sink.entry([ts, sink.model(model), input, Math.min(delta[1], input), delta[4], delta[2], delta[3], 0])
    },
  }
}

/** The cumulative totals a rollout reports, for recognising a fork's replay of them. Bounded read of the parent. */
function rolloutTotals(path: string): string[] | null {
  const found: string[] = []
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return null
  }
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    let carry = ''
    let position = 0
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, position)
      if (n === 0) break
      position += n
      const text = carry + buffer.toString('utf8', 0, n)
      const lines = text.split('\n')
      carry = lines.pop() ?? ''
      for (const line of lines) {
        if (!line.includes('"token_count"')) continue
        try {
          const t = totals(JSON.parse(line)?.payload?.info?.total_token_usage)
          if (t && t !== 'bad') found.push(sig(t))
        } catch {}
      }
    }
    return found
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

export function scanCodex(
  path: string,
  cacheDir: string | null,
  env: NodeJS.ProcessEnv = context().env,
  sums?: SumsHook,
): ScanResult {
  return scanFile(path, codexParser(env), cacheDir, sums)
}

/** The usage of one rollout, priced (each response on its own, so the 272k rule applies per response). */
export function visitCodex(scan: ScanResult, prices: PriceBook, visit: UsageVisitor): void {
  const n = scan.numbers
  const rates = scan.models.map((model) => prices.rates(model))
  for (let i = 0; i < scan.count; i++) {
    const at = i * WIDTH
    const m = n[at + 1]!
    const model = scan.models[m] ?? UNKNOWN_MODEL
    const r = rates[m] ?? null
    const t = codexTokens(n[at + 2]!, n[at + 3]!, n[at + 4]!, n[at + 5]!)
    const usd = r ? codexCost(t, r) : 0
    visit(n[at]!, model, r !== null, usd, t.input, t.output, t.cache_write_5m, t.cache_write_1h, t.cache_read)
  }
}

/** Entries [start, end) of a rollout added to `sums`; its models are registered first, each whether it counts or not. */
function addRange(scan: ScanResult, prices: PriceBook, sums: UsageSums, start: number, end: number): void {
  const n = scan.numbers
  const rates = scan.models.map((model) => prices.rates(model))
  const target = scan.models.map((model, i) => sums.model(model, rates[i] !== null))
  for (let i = start; i < end; i++) {
    const at = i * WIDTH
    const w = sums.window(n[at]!)
    if (w < 0) continue
    const m = n[at + 1]!
    const r = rates[m] ?? null
    const t = codexTokens(n[at + 2]!, n[at + 3]!, n[at + 4]!, n[at + 5]!)
    const into = target[m] ?? sums.model(UNKNOWN_MODEL, false)
    sums.add(w, into, r ? codexCost(t, r) : 0, t.input, t.output, t.cache_write_5m, t.cache_write_1h, t.cache_read)
  }
}

/** A rollout's responses added to `sums`. */
export function sumCodex(scan: ScanResult, prices: PriceBook, sums: UsageSums): void {
  addRange(scan, prices, sums, 0, scan.count)
}

/**
 * The sums of one rollout, going on from the sums its cache kept (when saved under the same `key`: windows and
 * prices). Returns them, and the state to keep (all but the latest entries, as for Claude transcripts).
 */
export function sumCodexFile(
  scan: ScanResult,
  prices: PriceBook,
  bounds: number[],
  key: string,
  saved: PartialSums | null,
): { sums: UsageSums; keep: PartialSums } {
  return resumeSums(bounds, key, saved, scan.count, (sums, start, end) => addRange(scan, prices, sums, start, end))
}

export function codexItems(scan: ScanResult, prices: PriceBook): UsageItem[] {
  return collect((visit) => visitCodex(scan, prices, visit))
}
