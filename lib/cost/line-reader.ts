// Handing a transcript's whole lines to its parser: the parser and entry-store interfaces, the default store, and
// the chunked line loop (a line is decoded and parsed only if it holds one of the parser's byte patterns).
import { readSync } from 'node:fs'
import type { LoadedCache, Skip } from './transcript-cache-file.ts'

/** Where a parser puts what one line yielded. */
export interface Sink {
  /** One usage entry: exactly `width` numbers. */
  entry(numbers: number[]): void
  /** Index of a model name in this file's model list. */
  model(name: string): number
  /** The line counts as nothing, for this reason (shown in `sources`). */
  skip(reason: string): void
}

/** Where a scan keeps a file's entries: by default each one appended; a parser may reduce copies as they come. */
export interface EntryStore {
  readonly count: number
  /** The lowest index of an entry changed in place since the store was made (Infinity if none). */
  readonly firstChanged: number
  /** Every entry changed in place since the store was made (in any order, maybe repeated). */
  changed(): number[]
  /** The index handed to the store no longer describes it (it was rebuilt). */
  readonly indexReplaced: boolean
  add(values: number[]): void
  /** The stored entries (count × width numbers). */
  view(): Float64Array
  /** What the store wants kept beside its entries (an index, as parts written one after the other), handed
   *  back to `store()` next time as one array. */
  index?(): Int32Array[]
}

/** A transcript line's JSON, probed field by field by the parsers; each value is checked where it is used. */
// biome-ignore lint/suspicious/noExplicitAny: untrusted JSON is probed key by key; every use checks the type
export type Loose = Record<string, any>

/** A transcript line as a JSON object, or undefined after telling the sink why it counts as nothing. */
export function jsonObjectLine(line: string, sink: Sink): Loose | undefined {
  let o: unknown
  try {
    o = JSON.parse(line)
  } catch {
    sink.skip('not valid JSON')
    return undefined
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    sink.skip('not a JSON object')
    return undefined
  }
  return o as Loose
}

export interface LineParser<S> {
  /** Names the cache format: change `version` whenever the parser's output for a line changes. */
  kind: string
  version: number
  width: number
  /** Lines containing none of these byte strings are only checked to look like one JSON object. */
  patterns: string[]
  init(path: string): S
  parse(line: string, state: S, sink: Sink, lineNo: number): void
  /** The store for a file's entries, starting from those already cached (default: append each entry). `initial`
   *  may be longer than count × width (room to grow); so may `index`, which covers the first `indexed` entries. */
  store?(initial: Float64Array, count: number, index: Int32Array | null, indexed: number): EntryStore
}

/** Entries appended in order, in a growing float64 array. */
export class AppendStore implements EntryStore {
  count: number
  readonly firstChanged = Number.POSITIVE_INFINITY
  readonly indexReplaced = false
  private numbers: Float64Array
  constructor(
    private width: number,
    initial: Float64Array = new Float64Array(0),
    count = 0,
  ) {
    this.count = count
    this.numbers = initial // grown (copied) only when an entry does not fit
  }
  add(values: number[]): void {
    const at = this.count * this.width
    if (at + this.width > this.numbers.length) {
      const grown = new Float64Array(Math.max(1024 * this.width, this.numbers.length * 2))
      grown.set(this.numbers)
      this.numbers = grown
    }
    for (let i = 0; i < this.width; i++) this.numbers[at + i] = values[i] ?? 0
    this.count++
  }
  view(): Float64Array {
    return this.numbers.subarray(0, this.count * this.width)
  }
  changed(): number[] {
    return []
  }
}

/** Collects a file's entries, models and skipped lines; starts from a cached scan when resuming. */
export class Accumulator {
  offset = 0
  lines = 0
  models: string[] = []
  readonly entries: EntryStore
  private modelIndex = new Map<string, number>()
  private skipped = new Map<string, Skip>()
  private lineNo = 0

  constructor(parser: LineParser<unknown>, resume: LoadedCache | null) {
    const initial = resume?.numbers ?? new Float64Array(0)
    const count = resume?.header.count ?? 0
    this.entries = parser.store
      ? parser.store(initial, count, resume?.index ?? null, resume?.indexed ?? 0)
      : new AppendStore(parser.width, initial, count)
    if (resume) {
      const h = resume.header
      this.offset = h.offset
      this.lines = h.lines
      this.models = [...h.models]
      this.models.forEach((name, i) => {
        this.modelIndex.set(name, i)
      })
      for (const s of h.skipped) this.skipped.set(s.reason, { ...s })
    }
  }

  get count() {
    return this.entries.count
  }

  readonly sink: Sink = {
    entry: (values) => this.entries.add(values),
    model: (name) => {
      let index = this.modelIndex.get(name)
      if (index === undefined) {
        index = this.models.length
        this.models.push(name)
        this.modelIndex.set(name, index)
      }
      return index
    },
    skip: (reason) => {
      const seen = this.skipped.get(reason)
      if (seen) seen.count++
      else this.skipped.set(reason, { reason, count: 1, first_line: this.lineNo })
    },
  }

  setLine(n: number) {
    this.lineNo = n
  }
  skippedList() {
    return [...this.skipped.values()]
  }
}

const CHUNK = 4 * 1024 * 1024

/**
 * Read from `start` to end of file in chunks; hand each complete line to the parser. Returns where the file ended.
 * Lines are found with Buffer.indexOf; a line is decoded and parsed only if it holds one of the parser's patterns.
 */
export function readLines<S>(
  fd: number,
  start: number,
  expected: number,
  parser: LineParser<S>,
  state: S,
  acc: Accumulator,
): { end: number; bytes: number } {
  const patterns = parser.patterns.map((p) => Buffer.from(p))
  // a warm check usually reads a little: a buffer its size (it grows if a line or the file does)
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(64 * 1024, expected + 1)))
  let carry = 0 // bytes of an unfinished line at the front of `buffer`
  let position = start
  let bytes = 0
  for (;;) {
    if (carry === buffer.length) {
      const grown = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(grown, 0, 0, carry)
      buffer = grown
    }
    const n = readSync(fd, buffer, carry, buffer.length - carry, position)
    if (n === 0) break
    position += n
    bytes += n
    const data = buffer.subarray(0, carry + n)
    const consumed = eachLine(data, patterns, parser, state, acc)
    acc.offset += consumed
    carry = data.length - consumed
    if (carry > 0) data.copy(buffer, 0, consumed, data.length)
  }
  return { end: position, bytes }
}

/** Process the complete lines of `data`; returns the bytes consumed (up to and including the last newline). */
function eachLine<S>(data: Buffer, patterns: Buffer[], parser: LineParser<S>, state: S, acc: Accumulator): number {
  const next = patterns.map((p) => data.indexOf(p, 0))
  let start = 0
  for (;;) {
    const nl = data.indexOf(10, start)
    if (nl === -1) return start
    let end = nl
    if (end > start && data[end - 1] === 13) end--
    acc.lines++
    if (end > start) {
      acc.setLine(acc.lines)
      let candidate = false
      for (let i = 0; i < next.length; i++) {
        let hit = next[i]!
        if (hit !== -1 && hit < start) {
          hit = data.indexOf(patterns[i]!, start)
          next[i] = hit
        }
        if (hit !== -1 && hit < end) candidate = true
      }
      if (candidate) parser.parse(data.toString('utf8', start, end), state, acc.sink, acc.lines)
      else if (data[start] !== 0x7b || data[end - 1] !== 0x7d) acc.sink.skip('not a JSON object')
    }
    start = nl + 1
  }
}
