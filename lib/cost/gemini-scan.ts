// Gemini CLI session files for the ledger (docs/reference/gemini-cli.md): read incrementally, one entry per message
// id (a message is written again whole each time it changes: its last record counts), priced per response (the
// >200k-prompt rule is per request) and summed into the round windows. A resume's file that replays messages of
// another file of the session counts them once, when the files are summed together.
import { geminiMessage } from './gemini-transcript.ts'
import { hash52 } from './hash.ts'
import { type EntryStore, jsonObjectLine, type LineParser, type Loose, type Sink } from './line-reader.ts'
import { UNKNOWN_MODEL, geminiCost, geminiTokens, type PriceBook, type Rates } from './pricing.ts'
import { type PartialSums, resumeSums, type UsageSums } from './sums.ts'
import { scanFile, type ScanResult, type SumsHook } from './transcript-cache.ts'

// Entry layout: timestamp ms, model index (-1 none), prompt (cached included), cached, candidates, thoughts, tool
// prompt, and two independent 52-bit hashes of the message id (matched on 104 bits: no practical false match).
const WIDTH = 9
const KEY = 7

const keyAt = (n: ArrayLike<number>, at: number) => `${n[at + KEY]},${n[at + KEY + 1]}`

/** A file's entries, one per message id: a later record of a message replaces its entry in place. */
export class GeminiStore implements EntryStore {
  count: number
  firstChanged = Number.POSITIVE_INFINITY
  readonly indexReplaced = false
  private changedRows: number[] = []
  private numbers: Float64Array
  private rowOf = new Map<string, number>()

  /** `initial` holds `count` entries (a cache's) and may have room for more. */
  constructor(initial: Float64Array = new Float64Array(0), count = 0) {
    this.count = count
    this.numbers = initial
    for (let e = 0; e < count; e++) this.rowOf.set(keyAt(initial, e * WIDTH), e)
  }

  add(values: number[]): void {
    const key = keyAt(values, 0)
    const row = this.rowOf.get(key)
    if (row === undefined) {
      this.rowOf.set(key, this.count)
      this.put(this.count++, values)
      return
    }
    const at = row * WIDTH
    if (values.every((v, i) => this.numbers[at + i] === v)) return // the same record again: nothing changed
    this.put(row, values)
    this.changedRows.push(row)
    this.firstChanged = Math.min(this.firstChanged, row)
  }

  private put(row: number, values: number[]): void {
    const at = row * WIDTH
    if (at + WIDTH > this.numbers.length) {
      const grown = new Float64Array(Math.max(256 * WIDTH, this.numbers.length * 2))
      grown.set(this.numbers)
      this.numbers = grown
    }
    for (let i = 0; i < WIDTH; i++) this.numbers[at + i] = values[i]!
  }

  view(): Float64Array {
    return this.numbers.subarray(0, this.count * WIDTH)
  }

  changed(): number[] {
    return this.changedRows
  }
}

/** A record that is a message with usage, as an entry; a `gemini` message of the wrong shape, as a skipped line. */
function offer(record: Loose, sink: Sink): void {
  const found = geminiMessage(record)
  if (found === null) return
  if (typeof found === 'string' || Number.isNaN(found.timestamp)) {
    sink.skip(`gemini message of the wrong shape: ${typeof found === 'string' ? found : 'timestamp'}`)
    return
  }
  const model = found.model ? sink.model(found.model) : -1
  const { prompt, cached, candidates, thoughts, tool, id } = found
  sink.entry([found.timestamp, model, prompt, cached, candidates, thoughts, tool, hash52(id), hash52(`${id}\n`)])
}

export const geminiParser: LineParser<null> = {
  kind: 'gemini',
  version: 1,
  width: WIDTH,
  store: (initial, count) => new GeminiStore(initial, count),
  patterns: ['"tokens"'], // a message with usage, alone or inside a `$set` of the message list
  init: () => null,
  parse(line, _state, sink) {
    const record = jsonObjectLine(line, sink)
    if (record === undefined) return
    offer(record, sink)
    const nested = record.$set?.messages
    if (Array.isArray(nested)) for (const message of nested) offer(message, sink)
  },
}

/** One session file, read from where its cache left off; `sums` may keep the caller's sums in that cache. */
export function scanGemini(path: string, cacheDir: string | null, sums?: SumsHook): ScanResult {
  return scanFile(path, geminiParser, cacheDir, sums)
}

/** Adds entries to sums, a model registered when it first has a response inside a window. */
class GeminiSummer {
  private rates = new Map<string, Rates | null>()
  constructor(
    private prices: PriceBook,
    private sums: UsageSums,
  ) {}

  add(n: Float64Array, at: number, models: string[]): void {
    const w = this.sums.window(n[at]!)
    if (w < 0) return
    const model = models[n[at + 1]!] ?? UNKNOWN_MODEL
    if (!this.rates.has(model)) this.rates.set(model, model === UNKNOWN_MODEL ? null : this.prices.rates(model))
    const r = this.rates.get(model)!
    // uncached prompt and tool prompt as input, thoughts billed as output
    const t = geminiTokens(n[at + 2]!, n[at + 3]!, n[at + 4]! + n[at + 5]!)
    t.input += n[at + 6]!
    const usd = r ? geminiCost(t, r, true) : 0
    this.sums.add(w, this.sums.model(model, r !== null), usd, t.input, t.output, 0, 0, t.cache_read)
  }
}

/**
 * The sums of one session file, going on from the sums its cache kept (when saved under the same `key`: windows and
 * prices, and no entry they covered rewritten since). Returns them, and the state to keep.
 */
export function sumGeminiFile(
  scan: ScanResult,
  prices: PriceBook,
  bounds: number[],
  key: string,
  saved: PartialSums | null,
): { sums: UsageSums; keep: PartialSums } {
  let summer: GeminiSummer | null = null
  return resumeSums(bounds, key, saved, scan.count, (sums, start, end) => {
    summer ??= new GeminiSummer(prices, sums)
    for (let e = start; e < end; e++) summer.add(scan.numbers, e * WIDTH, scan.models)
  })
}

/** Several files' responses added to `sums`, each message id once (the last file's record), in order of first sight. */
export function sumGemini(scans: ScanResult[], prices: PriceBook, sums: UsageSums): void {
  const last = new Map<string, { scan: ScanResult; at: number }>()
  for (const scan of scans)
    for (let e = 0; e < scan.count; e++) last.set(keyAt(scan.numbers, e * WIDTH), { scan, at: e * WIDTH })
  const summer = new GeminiSummer(prices, sums)
  for (const { scan, at } of last.values()) summer.add(scan.numbers, at, scan.models)
}
