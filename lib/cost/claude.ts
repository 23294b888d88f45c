// Claude Code transcripts: read their usage lines, de-duplicate globally as ccusage 20 does, price and sum them.
import { F_MSG_ID, F_REMOVED, F_SIDECHAIN, F_SPEED, ClaudeReducer, WIDTH } from './claude-reducer.ts'
import { hash52 } from './hash.ts'
import { jsonObjectLine, type LineParser, type Loose } from './line-reader.ts'
import { UNKNOWN_MODEL, claudeCostOf, type PriceBook, type Rates } from './pricing.ts'
import { type PartialSums, resumeSums, type UsageItem, type UsageVisitor, type UsageSums, collect } from './sums.ts'
import { scanFile, type ScanResult, type SumsHook } from './transcript-cache.ts'

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
  store: (initial, count, index, indexed) => new ClaudeReducer(initial, count, index, indexed),
  patterns: ['"usage"'],
  init: () => null,
  parse(line, _state, sink) {
    const o = jsonObjectLine(line, sink)
    if (o === undefined || o.type !== 'assistant') return
    const m = o.message
    if (m === null || typeof m !== 'object' || m.usage === undefined) return
    const u = m.usage
    if (u === null || typeof u !== 'object') {
      sink.skip('assistant line of the wrong shape: message.usage is not an object')
      return
    }
    if (m.model === '<synthetic>') return // a locally generated error message: no API call, no cost
    const why = shapeProblem(o, m, u)
    if (why) {
      sink.skip(`assistant line of the wrong shape: ${why}`)
      return
    }
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

function shapeProblem(o: Loose, m: Loose, u: Loose): string | null {
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

/** One transcript file, read from where its cache left off; `sums` may keep the caller's sums in that cache. */
export function scanClaude(path: string, cacheDir: string | null, sums?: SumsHook): ScanResult {
  return scanFile(path, claudeParser, cacheDir, sums)
}

/** The kept responses of `scans` as objects (for callers that want a list; the ledger sums instead). */
export function dedupeClaude(scans: ScanResult[], prices: PriceBook): UsageItem[] {
  return collect((visit) => visitClaude(scans, prices, visit))
}

/**
 * Each kept response of `scans` (each already reduced on its own), reduced together when there are several:
 * `each(numbers, at, model)` with the model as an index into `models` (filled here, before the first call).
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
      if (index === undefined) {
        index = models.push(name) - 1
        modelIndex.set(name, index)
      }
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
  together.forEach((n, at) => {
    each(n, at, n[at + 2]!)
  })
}

/** Each kept response of `scans`, priced, as a visit. */
export function visitClaude(scans: ScanResult[], prices: PriceBook, visit: UsageVisitor): void {
  const models: string[] = []
  let rates: Array<Rates | null> = []
  forEachKept(scans, models, (n, at, m) => {
    if (rates.length < models.length) rates = models.map((name) => prices.rates(name))
    const r = m < 0 ? null : rates[m]!
    const input = n[at + 3]!
    const output = n[at + 4]!
    const w5m = n[at + 5]!
    const w1h = n[at + 6]!
    const read = n[at + 7]!
    const usd = r ? claudeCostOf(input, output, w5m, w1h, read, r) : 0
    visit(n[at]!, m < 0 ? UNKNOWN_MODEL : models[m]!, r !== null, usd, input, output, w5m, w1h, read)
  })
}

/**
 * Adds kept entries to the sums. The files' models are registered together at the first response inside a window
 * (so a model seen only outside the windows is still listed, priced or not, once anything counts), responses
 * without a model under UNKNOWN_MODEL, last.
 */
class ClaudeSummer {
  private rates: Array<Rates | null> = []
  private target: number[] | null = null
  constructor(
    private models: string[],
    private prices: PriceBook,
    private sums: UsageSums,
  ) {}

  add(n: Float64Array, at: number, m: number): void {
    const w = this.sums.window(n[at]!)
    if (w < 0) return
    const target = this.target ?? this.register()
    const r = m < 0 ? null : this.rates[m]!
    const input = n[at + 3]!
    const output = n[at + 4]!
    const w5m = n[at + 5]!
    const w1h = n[at + 6]!
    const read = n[at + 7]!
    const into = m < 0 ? this.sums.model(UNKNOWN_MODEL, false) : target[m]!
    this.sums.add(w, into, r ? claudeCostOf(input, output, w5m, w1h, read, r) : 0, input, output, w5m, w1h, read)
  }

  register(): number[] {
    this.rates = this.models.map((name) => this.prices.rates(name))
    this.target = this.models.map((name, i) => this.sums.model(name, this.rates[i] !== null))
    return this.target
  }
}

/** The kept responses of `scans`, reduced together, added to `sums`. */
export function sumClaude(scans: ScanResult[], prices: PriceBook, sums: UsageSums): void {
  const models: string[] = []
  const summer = new ClaudeSummer(models, prices, sums)
  forEachKept(scans, models, (n, at, m) => summer.add(n, at, m))
}

/**
 * The sums of one transcript, going on from the sums its cache kept (when saved under the same `key`: windows and
 * prices). Returns them, and the state to keep: all but the latest entries (those may still be replaced).
 */
export function sumClaudeFile(
  scan: ScanResult,
  prices: PriceBook,
  bounds: number[],
  key: string,
  saved: PartialSums | null,
): { sums: UsageSums; keep: PartialSums } {
  const n = scan.numbers
  let summer: ClaudeSummer | null = null
  const result = resumeSums(bounds, key, saved, scan.count, (sums, start, end) => {
    if (!summer) {
      summer = new ClaudeSummer(scan.models, prices, sums)
      if (sums.models.length > 0) summer.register() // an earlier check saw a response inside a window
    }
    for (let e = start; e < end; e++) if (!(n[e * WIDTH + 1]! & F_REMOVED)) summer.add(n, e * WIDTH, n[e * WIDTH + 2]!)
  })
  result.sums.moveLast(UNKNOWN_MODEL)
  return result
}
