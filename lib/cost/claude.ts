// Claude Code transcripts: find a session's files, read their usage lines, de-duplicate globally as ccusage 20 does.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { jsonObjectLine, scanFile, type EntryStore, type LineParser, type ScanResult } from './cache.ts'
import { claudeConfigDir, claudeProjectDir } from './locate.ts'
import { UNKNOWN_MODEL, claudeCostOf, type PriceBook, type Tokens } from './pricing.ts'

// Entry layout (numbers): timestamp ms, flags, model index (-1 none), input, output, 5m writes, 1h writes, reads,
// hash of message.id, hash of requestId (-1 when absent). The keys are kept as two independent 52-bit hashes: a
// (message.id, requestId) pair is matched on 104 bits, so a false match is not a practical possibility; a bare
// message.id (the sidechain rule) on 52, about one chance in 10^8 for a long session with many sidechain lines.
const F_SIDECHAIN = 1
const F_SPEED = 2
const F_MSG_ID = 4
/** A kept copy that a later copy off the sidechain replaced. */
const F_REMOVED = 8
const WIDTH = 10

/** A 52-bit hash of a string (two 32-bit FNV-1a-style passes with different primes), exact in a float64. */
export function hash52(text: string): number {
  let a = 0x811c9dc5
  let b = 0x9747b28c
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b ^= b >>> 15
  }
  return (a >>> 0) * 0x100000 + ((b >>> 12) & 0xfffff)
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0
const optionalCount = (n: unknown) => n === undefined || isCount(n)
const optionalText = (s: unknown) => s === undefined || (typeof s === 'string' && s.length > 0)

/** Parses assistant lines with usage. Line validity follows what ccusage 20.0.24 accepts, so totals agree. */
export const claudeParser: LineParser<null> = {
  kind: 'claude',
  version: 3,
  width: WIDTH,
  store: (initial, count, index) => new ClaudeReducer(initial, count, index),
  patterns: ['"usage"'],
  init: () => null,
  parse(line, _state, sink) {
    const o = jsonObjectLine(line, sink)
    if (o === undefined || o.type !== 'assistant') return
    const m = o.message
    if (m === null || typeof m !== 'object' || m.usage === undefined) return
    const u = m.usage
    if (u === null || typeof u !== 'object')
      return sink.skip('assistant line of the wrong shape: message.usage is not an object')
    if (m.model === '<synthetic>') return // a locally generated error message: no API call, no cost
    const why = shapeProblem(o, m, u)
    if (why) return sink.skip(`assistant line of the wrong shape: ${why}`)
    const split = u.cache_creation !== undefined && u.cache_creation !== null
    const flags =
      (o.isSidechain === true ? F_SIDECHAIN : 0) |
      (u.speed !== undefined ? F_SPEED : 0) |
      (m.id !== undefined ? F_MSG_ID : 0)
    const model = m.model === undefined ? -1 : sink.model(u.speed === 'fast' ? `${m.model}-fast` : m.model)
    sink.entry([
      Date.parse(o.timestamp),
      flags,
      model,
      u.input_tokens,
      u.output_tokens,
      // with the split object present only its two fields count (ccusage 20.0.24); without it, all writes are 5m
      split ? (u.cache_creation.ephemeral_5m_input_tokens ?? 0) : (u.cache_creation_input_tokens ?? 0),
      split ? (u.cache_creation.ephemeral_1h_input_tokens ?? 0) : 0,
      u.cache_read_input_tokens ?? 0,
      m.id === undefined ? -1 : hash52(m.id),
      o.requestId === undefined ? -1 : hash52(o.requestId),
    ])
  },
}

function shapeProblem(o: any, m: any, u: any): string | null {
  if (!isCount(u.input_tokens)) return 'usage.input_tokens'
  if (!isCount(u.output_tokens)) return 'usage.output_tokens'
  if (!optionalCount(u.cache_creation_input_tokens)) return 'usage.cache_creation_input_tokens'
  if (!optionalCount(u.cache_read_input_tokens)) return 'usage.cache_read_input_tokens'
  if (u.cache_creation !== undefined && u.cache_creation !== null) {
    const c = u.cache_creation
    if (
      typeof c !== 'object' ||
      !optionalCount(c.ephemeral_5m_input_tokens) ||
      !optionalCount(c.ephemeral_1h_input_tokens)
    )
      return 'usage.cache_creation'
  }
  if (u.speed !== undefined && u.speed !== 'standard' && u.speed !== 'fast') return 'usage.speed'
  if (typeof o.timestamp !== 'string' || !ISO_WITH_ZONE.test(o.timestamp) || Number.isNaN(Date.parse(o.timestamp)))
    return 'timestamp'
  if (o.version !== undefined && (typeof o.version !== 'string' || !SEMVER.test(o.version))) return 'version'
  if (o.isSidechain !== undefined && typeof o.isSidechain !== 'boolean') return 'isSidechain'
  if (!optionalText(m.id)) return 'message.id'
  if (!optionalText(o.requestId)) return 'requestId'
  if (!optionalText(m.model)) return 'message.model'
  if (!optionalText(o.sessionId)) return 'sessionId'
  return null
}

/** The files of one session: the main transcript (in any project folder) and its subagents' transcripts. */
export interface SessionFiles {
  session: string
  main: string | null
  subagents: string[]
  looked_in: string
}

export function claudeSessionFiles(
  sessionId: string,
  options: { repo?: string; env?: NodeJS.ProcessEnv } = {},
): SessionFiles {
  const env = options.env ?? process.env
  const name = `${sessionId}.jsonl`
  const roots = claudeProjectRoots(env)
  let main: string | null = null
  if (options.repo) {
    const here = join(claudeProjectDir(options.repo, env), name)
    if (existsSync(here)) main = here
  }
  for (const root of roots) {
    if (main) break
    let folders: string[]
    try {
      folders = readdirSync(root)
    } catch {
      continue
    }
    for (const folder of folders.sort()) {
      const candidate = join(root, folder, name)
      if (existsSync(candidate)) {
        main = candidate
        break
      }
    }
  }
  const subagents: string[] = []
  if (main) walkJsonl(join(main.slice(0, -'.jsonl'.length)), 3, subagents)
  return { session: sessionId, main, subagents: subagents.sort(), looked_in: roots.join(', ') }
}

/** `<config>/projects`, and the legacy `$XDG_CONFIG_HOME/claude/projects` some mid-2025 releases used. */
export function claudeProjectRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const roots = [join(claudeConfigDir(env), 'projects')]
  if (!env.CLAUDE_CONFIG_DIR && env.HOME)
    roots.push(join(env.XDG_CONFIG_HOME || join(env.HOME, '.config'), 'claude', 'projects'))
  return roots
}

function walkJsonl(dir: string, depth: number, into: string[]): void {
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory() && depth > 0) walkJsonl(path, depth - 1, into)
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) into.push(path)
  }
}

export function scanClaude(path: string, cacheDir: string | null): ScanResult {
  return scanFile(path, claudeParser, cacheDir)
}

/** One kept (de-duplicated) API response. */
export interface UsageItem {
  ts: number
  model: string
  tokens: Tokens
  usd: number
  priced: boolean
}

/** Called once per kept response; the token counts come as plain numbers (no object per response). */
export type UsageVisitor = (
  ts: number,
  model: string,
  priced: boolean,
  usd: number,
  input: number,
  output: number,
  w5m: number,
  w1h: number,
  read: number,
) => void

export function collect(run: (visit: UsageVisitor) => void): UsageItem[] {
  const items: UsageItem[] = []
  run((ts, model, priced, usd, input, output, w5m, w1h, read) =>
    items.push({
      ts,
      model,
      priced,
      usd,
      tokens: { input, output, cache_write_5m: w5m, cache_write_1h: w1h, cache_read: read },
    }),
  )
  return items
}

/** The kept responses of `scans` as objects (for callers that want a list; the ledger visits instead). */
export function dedupeClaude(scans: ScanResult[], prices: PriceBook): UsageItem[] {
  return collect((visit) => visitClaude(scans, prices, visit))
}

/**
 * A set of responses reduced as ccusage 20.0.24 reduces copies of one response (as its `daily` report does).
 * Lines without message.id are never merged. Same (message.id, requestId): one response; a copy off the sidechain
 * beats one on it, otherwise the larger token total wins, on a tie the one with `usage.speed`, then the first seen.
 * Same message.id with another requestId, either copy on a sidechain: a sidechain replay of the same response,
 * where again the copy off the sidechain wins (and of two sidechain copies, the larger). (ccusage's `session` report
 * merges such replays only when their timestamps are equal: a known disagreement between its two reports.)
 *
 * The result depends only on the set of lines (up to exact ties), so each file is reduced as it is read (its cache
 * holds only kept responses) and several files are reduced again together. Entries live in one float64 array; an
 * open-addressing table finds the chain of kept entries with the same message.id: no object per line.
 */
export class ClaudeReducer implements EntryStore {
  count: number
  private numbers: Float64Array
  private table: Int32Array | null = null
  private next: Int32Array = new Int32Array(0)
  private mask = 0

  constructor(initial: Float64Array = new Float64Array(0), count = 0, index: Int32Array | null = null) {
    this.count = count
    this.numbers = initial.subarray(0, count * WIDTH) // changed in place; grown (copied) only when an entry is added
    // the table saved beside the entries: [size, table (size), next (count)]
    const size = index?.[0] ?? 0
    if (index && size >= 1024 && (size & (size - 1)) === 0 && index.length === 1 + size + count && count * 2 <= size) {
      this.table = index.subarray(1, 1 + size)
      this.next = index.subarray(1 + size)
      this.mask = size - 1
    }
  }

  view(): Float64Array {
    return this.numbers.subarray(0, this.count * WIDTH)
  }

  /** The table and chains, to be saved beside the entries so the next check need not rebuild them. */
  index(): Int32Array[] {
    if (!this.table) return []
    return [Int32Array.of(this.table.length), this.table, this.next.subarray(0, this.count)]
  }

  add(values: number[]): void {
    this.offer(values, 0)
  }

  /** Take the entry at `src[at …]`: keep it, let it replace the copy kept so far, or drop it. */
  offer(src: ArrayLike<number>, at: number): void {
    const flags = src[at + 1]!
    if (flags & F_REMOVED) return
    if (!(flags & F_MSG_ID)) return void this.push(src, at)
    if (!this.table) this.rebuild()
    const n = this.numbers
    const msg = src[at + 8]!
    const req = src[at + 9]!
    const side = (flags & F_SIDECHAIN) !== 0
    const t = this.slotOf(msg)
    const head = this.table![t]!
    let exact = -1
    let anyMain = false
    let firstSide = -1
    for (let k = head; k !== -1; k = this.next[k]!) {
      const kf = n[k * WIDTH + 1]!
      if (kf & F_REMOVED) continue
      if (n[k * WIDTH + 9] === req) exact = k
      if (kf & F_SIDECHAIN) {
        if (firstSide < 0) firstSide = k
      } else anyMain = true
    }
    if (exact >= 0) {
      // the same response again (another content block, a partial early copy, a resumed session's copy)
      const exactSide = (n[exact * WIDTH + 1]! & F_SIDECHAIN) !== 0
      if (side !== exactSide ? !side : this.beats(src, at, exact)) this.copyInto(exact, src, at)
      return
    }
    if (side) {
      // a sidechain replay of a response already kept
      if (anyMain) return
      if (firstSide >= 0) {
        if (this.beats(src, at, firstSide)) this.copyInto(firstSide, src, at)
        return
      }
    } else {
      for (let k = head; k !== -1; k = this.next[k]!)
        if (n[k * WIDTH + 1]! & F_SIDECHAIN) n[k * WIDTH + 1] = n[k * WIDTH + 1]! | F_REMOVED
    }
    const e = this.push(src, at)
    if (this.count * 2 > this.table!.length) return this.rebuild() // keep the table at most half full
    this.next[e] = this.table![t]!
    this.table![t] = e
  }

  /** Visit every kept entry (index into view()). */
  forEach(each: (numbers: Float64Array, at: number) => void): void {
    const n = this.numbers
    for (let e = 0; e < this.count; e++) if (!(n[e * WIDTH + 1]! & F_REMOVED)) each(n, e * WIDTH)
  }

  private beats(src: ArrayLike<number>, at: number, k: number): boolean {
    const n = this.numbers
    const p = k * WIDTH
    const ta = src[at + 3]! + src[at + 4]! + src[at + 5]! + src[at + 6]! + src[at + 7]!
    const tb = n[p + 3]! + n[p + 4]! + n[p + 5]! + n[p + 6]! + n[p + 7]!
    if (ta !== tb) return ta > tb
    return (src[at + 1]! & F_SPEED) !== 0 && (n[p + 1]! & F_SPEED) === 0
  }

  private copyInto(k: number, src: ArrayLike<number>, at: number): void {
    for (let i = 0; i < WIDTH; i++) this.numbers[k * WIDTH + i] = src[at + i]!
  }

  private push(src: ArrayLike<number>, at: number): number {
    const e = this.count
    if ((e + 1) * WIDTH > this.numbers.length) {
      const grown = new Float64Array(Math.max(1024 * WIDTH, this.numbers.length * 2))
      grown.set(this.numbers)
      this.numbers = grown
    }
    if (this.table && e >= this.next.length) {
      const grown = new Int32Array(Math.max(e + 1, this.numbers.length / WIDTH))
      grown.set(this.next)
      this.next = grown
    }
    for (let i = 0; i < WIDTH; i++) this.numbers[e * WIDTH + i] = src[at + i]!
    this.count++
    return e
  }

  /** The table slot for a message.id hash: the one holding its chain, or the empty one where it would go. */
  private slotOf(msg: number): number {
    const table = this.table!
    const n = this.numbers
    let t = (msg % table.length) & this.mask
    while (table[t] !== -1 && n[table[t]! * WIDTH + 8] !== msg) t = (t + 1) & this.mask
    return t
  }

  /** (Re)build the table over the kept entries that have a message.id. */
  private rebuild(): void {
    let size = 1024
    while (size < this.count * 4) size *= 2
    this.table = new Int32Array(size).fill(-1)
    this.mask = size - 1
    if (this.next.length < this.numbers.length / WIDTH) {
      const grown = new Int32Array(this.numbers.length / WIDTH)
      grown.set(this.next)
      this.next = grown
    }
    const n = this.numbers
    for (let e = 0; e < this.count; e++) {
      const flags = n[e * WIDTH + 1]!
      if (!(flags & F_MSG_ID) || flags & F_REMOVED) continue
      const t = this.slotOf(n[e * WIDTH + 8]!)
      this.next[e] = this.table[t]!
      this.table[t] = e
    }
  }
}

/**
 * Each kept response of `scans` (each already reduced on its own), reduced together when there are several:
 * `each(numbers, at, model)` with the model as an index into `models` (filled here).
 */
function forEachKept(
  scans: ScanResult[],
  models: string[],
  each: (n: Float64Array, at: number, model: number) => void,
): void {
  const modelIndex = new Map<string, number>()
  const global = scans.map((scan) =>
    scan.models.map((name) => {
      let index = modelIndex.get(name)
      if (index === undefined) modelIndex.set(name, (index = models.push(name) - 1))
      return index
    }),
  )
  if (scans.length === 1) {
    const n = scans[0]!.numbers
    const g = global[0]!
    for (let e = 0, count = scans[0]!.count; e < count; e++) {
      const at = e * WIDTH
      if (n[at + 1]! & F_REMOVED) continue
      const m = n[at + 2]!
      each(n, at, m < 0 ? -1 : g[m]!)
    }
    return
  }
  const together = new ClaudeReducer()
  const row = new Float64Array(WIDTH)
  scans.forEach((scan, s) => {
    const n = scan.numbers
    for (let e = 0; e < scan.count; e++) {
      for (let i = 0; i < WIDTH; i++) row[i] = n[e * WIDTH + i]!
      if (row[2]! >= 0) row[2] = global[s]![row[2]!]!
      together.offer(row, 0)
    }
  })
  together.forEach((n, at) => each(n, at, n[at + 2]!))
}

/** Each kept response of `scans`, priced, as a visit. */
export function visitClaude(scans: ScanResult[], prices: PriceBook, visit: UsageVisitor): void {
  const models: string[] = []
  let rates: Array<ReturnType<PriceBook['rates']>> = []
  forEachKept(scans, models, (n, at, m) => {
    if (rates.length < models.length) rates = models.map((name) => prices.rates(name))
    const r = m < 0 ? null : rates[m]!
    const input = n[at + 3]!,
      output = n[at + 4]!,
      w5m = n[at + 5]!,
      w1h = n[at + 6]!,
      read = n[at + 7]!
    visit(
      n[at]!,
      m < 0 ? UNKNOWN_MODEL : models[m]!,
      r !== null,
      r ? claudeCostOf(input, output, w5m, w1h, read, r) : 0,
      input,
      output,
      w5m,
      w1h,
      read,
    )
  })
}

/**
 * USD and tokens per (time window, model), for the ledger: window w is [bounds[w], bounds[w + 1]); responses before
 * the first bound or at/after the last are left out. Summed in one tight loop (this runs on every check).
 */
export class UsageSums {
  readonly models: string[] = []
  readonly priced: boolean[] = []
  /** Per model: [window × 6] = usd, input, output, 5m writes, 1h writes, reads. */
  readonly data: Float64Array[] = []
  private indexOf = new Map<string, number>()
  constructor(readonly bounds: number[]) {}

  get windows() {
    return this.bounds.length - 1
  }

  /** The window of a timestamp, or -1 outside them. */
  window(ts: number): number {
    const b = this.bounds
    if (!(ts >= b[0]!) || ts >= b[b.length - 1]!) return -1
    let w = 0
    while (w + 2 < b.length && ts >= b[w + 1]!) w++
    return w
  }

  model(name: string, priced: boolean): number {
    let m = this.indexOf.get(name)
    if (m === undefined) {
      m = this.models.push(name) - 1
      this.priced.push(priced)
      this.data.push(new Float64Array(this.windows * 6))
      this.indexOf.set(name, m)
    }
    return m
  }

  add(w: number, m: number, usd: number, input: number, output: number, w5m: number, w1h: number, read: number): void {
    const d = this.data[m]!
    const at = w * 6
    d[at] = d[at]! + usd
    d[at + 1] = d[at + 1]! + input
    d[at + 2] = d[at + 2]! + output
    d[at + 3] = d[at + 3]! + w5m
    d[at + 4] = d[at + 4]! + w1h
    d[at + 5] = d[at + 5]! + read
  }
}

export function sumClaude(scans: ScanResult[], prices: PriceBook, sums: UsageSums): void {
  const models: string[] = []
  let rates: Array<ReturnType<PriceBook['rates']>> = []
  let target: number[] = []
  forEachKept(scans, models, (n, at, m) => {
    const w = sums.window(n[at]!)
    if (w < 0) return
    if (target.length < models.length) {
      rates = models.map((name) => prices.rates(name))
      target = models.map((name, i) => sums.model(name, rates[i] !== null))
    }
    const r = m < 0 ? null : rates[m]!
    const input = n[at + 3]!,
      output = n[at + 4]!,
      w5m = n[at + 5]!,
      w1h = n[at + 6]!,
      read = n[at + 7]!
    const into = m < 0 ? sums.model(UNKNOWN_MODEL, false) : target[m]!
    sums.add(w, into, r ? claudeCostOf(input, output, w5m, w1h, read, r) : 0, input, output, w5m, w1h, read)
  })
}
