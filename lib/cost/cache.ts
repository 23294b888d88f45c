// Reading a transcript that is still being written, incrementally: whole lines only, and never twice.
//
// Per file we remember (under $PAIR_LOOP_HOME/cache/transcripts/) how far it was read, the parser's state at that
// point, and every usage entry it yielded (numbers, de-duplication keys as hashes), keyed by path and checked
// against device, inode, size, mtime and the bytes just before the offset. The next scan reads only what was
// appended; a replaced, truncated or rewritten file is read again from the start. A partial last line (no newline
// yet) is left for the next scan, so it counts once, when complete.
import { createHash } from 'node:crypto'
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'

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
  add(values: number[]): void
  /** The stored entries (count × width numbers). */
  view(): Float64Array
  /** What the store wants kept beside its entries (an index, as parts written one after the other), handed
   *  back to `store()` next time as one array. */
  index?(): Int32Array[]
}

/** A transcript line as a JSON object, or undefined after telling the sink why it counts as nothing. */
export function jsonObjectLine(line: string, sink: Sink): any {
  let o: unknown
  try {
    o = JSON.parse(line)
  } catch {
    return sink.skip('not valid JSON')
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return sink.skip('not a JSON object')
  return o
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
  /** The store for a file's entries, starting from those already cached (default: append each entry). */
  store?(initial: Float64Array, count: number, index: Int32Array | null): EntryStore
}

/** Entries appended in order, in a growing float64 array. */
export class AppendStore implements EntryStore {
  count: number
  private numbers: Float64Array
  constructor(
    private width: number,
    initial: Float64Array = new Float64Array(0),
    count = 0,
  ) {
    this.count = count
    this.numbers = initial.subarray(0, count * width) // grown (copied) only when an entry is added
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
}

export interface Skip {
  reason: string
  count: number
  first_line: number
}

export interface ScanResult {
  path: string
  status: 'read' | 'missing' | 'unreadable'
  why?: string
  /** Bytes of whole lines counted so far (the offset); bytes of an unfinished last line; bytes read by this scan. */
  offset: number
  pending_bytes: number
  read_bytes: number
  from_cache: boolean
  lines: number
  numbers: Float64Array
  models: string[]
  count: number
  skipped: Skip[]
}

interface Header {
  magic: 'pair-loop-transcript-cache'
  kind: string
  version: number
  path: string
  dev: number
  ino: number
  size: number
  mtimeMs: number
  offset: number
  tail: string
  lines: number
  count: number
  models: string[]
  skipped: Skip[]
  state: unknown
  /** Length of the store's index (int32s after the entries), 0 if none. */
  index: number
}

const CHUNK = 4 * 1024 * 1024
const TAIL = 64

export function cacheFileFor(cacheDir: string, kind: string, path: string): string {
  return join(cacheDir, 'transcripts', `${kind}-${createHash('sha256').update(path).digest('hex').slice(0, 32)}.bin`)
}

/** Scan `path` from where the cache left off (or from the start), returning every entry of the file's whole lines. */
export function scanFile<S>(path: string, parser: LineParser<S>, cacheDir: string | null): ScanResult {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return emptyResult(
      path,
      code === 'ENOENT' ? 'missing' : 'unreadable',
      code === 'ENOENT' ? 'no such file' : describe(error),
    )
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return emptyResult(path, 'unreadable', 'not a regular file')
    const cacheFile = cacheDir ? cacheFileFor(cacheDir, parser.kind, path) : null
    const cached = cacheFile ? loadCache(cacheFile, parser, path) : null
    const resume = cached && canResume(cached.header, st, fd) ? cached : null
    if (resume && resume.header.size === st.size && resume.header.mtimeMs === st.mtimeMs) {
      return toResult(path, resume.header, resume.numbers, 0, true, st.size)
    }
    const acc = new Accumulator(parser, resume)
    const state = (resume ? resume.header.state : parser.init(path)) as S
    const read = readLines(fd, acc.offset, st.size - acc.offset, parser, state, acc)
    const after = fstatSync(fd)
    const header: Header = {
      magic: 'pair-loop-transcript-cache',
      kind: parser.kind,
      version: parser.version,
      path,
      dev: st.dev,
      ino: st.ino,
      size: read.end,
      mtimeMs: after.mtimeMs,
      offset: acc.offset,
      tail: acc.offset > 0 ? readTail(fd, acc.offset) : '',
      lines: acc.lines,
      count: acc.count,
      models: acc.models,
      skipped: acc.skippedList(),
      state,
      index: 0,
    }
    const numbers = acc.numbersView()
    const index = acc.entries.index?.() ?? []
    header.index = index.reduce((sum, part) => sum + part.length, 0)
    if (cacheFile && read.bytes > 0) saveCache(cacheFile, header, numbers, index)
    return toResult(path, header, numbers, read.bytes, resume !== null, read.end)
  } catch (error) {
    return emptyResult(path, 'unreadable', describe(error))
  } finally {
    closeSync(fd)
  }
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  return e.code ? `${e.code}: ${e.message}` : String(e?.message ?? error)
}

function emptyResult(path: string, status: ScanResult['status'], why: string): ScanResult {
  return {
    path,
    status,
    why,
    offset: 0,
    pending_bytes: 0,
    read_bytes: 0,
    from_cache: false,
    lines: 0,
    numbers: new Float64Array(0),
    models: [],
    count: 0,
    skipped: [],
  }
}

function toResult(
  path: string,
  h: Header,
  numbers: Float64Array,
  readBytes: number,
  fromCache: boolean,
  end: number,
): ScanResult {
  return {
    path,
    status: 'read',
    offset: h.offset,
    pending_bytes: Math.max(0, end - h.offset),
    read_bytes: readBytes,
    from_cache: fromCache,
    lines: h.lines,
    numbers,
    models: h.models,
    count: h.count,
    skipped: h.skipped,
  }
}

/** Same file (device, inode), not shorter than what we counted, not rewritten in place, same bytes before the offset. */
function canResume(h: Header, st: import('node:fs').Stats, fd: number): boolean {
  if (h.dev !== st.dev || h.ino !== st.ino) return false
  if (st.size < h.offset) return false
  if (st.size === h.size && st.mtimeMs !== h.mtimeMs) return false
  if (h.offset > 0 && readTail(fd, h.offset) !== h.tail) return false
  return true
}

function readTail(fd: number, offset: number): string {
  const start = Math.max(0, offset - TAIL)
  const buffer = Buffer.alloc(offset - start)
  const n = readSync(fd, buffer, 0, buffer.length, start)
  return buffer.subarray(0, n).toString('base64')
}

/** Collects entries, growing a Float64Array; starts from a cached scan when resuming. */
class Accumulator {
  offset = 0
  lines = 0
  models: string[] = []
  readonly entries: EntryStore
  private modelIndex = new Map<string, number>()
  private skipped = new Map<string, Skip>()
  private lineNo = 0

  constructor(parser: LineParser<unknown>, resume: Loaded | null) {
    const initial = resume?.numbers ?? new Float64Array(0)
    const count = resume?.header.count ?? 0
    this.entries = parser.store
      ? parser.store(initial, count, resume?.index ?? null)
      : new AppendStore(parser.width, initial, count)
    if (resume) {
      const h = resume.header
      this.offset = h.offset
      this.lines = h.lines
      this.models = [...h.models]
      this.models.forEach((name, i) => this.modelIndex.set(name, i))
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
  numbersView() {
    return this.entries.view()
  }
  skippedList() {
    return [...this.skipped.values()]
  }
}

/**
 * Read from `start` to end of file in chunks; hand each complete line to the parser. Returns where the file ended.
 * Lines are found with Buffer.indexOf; a line is decoded and parsed only if it holds one of the parser's patterns.
 */
function readLines<S>(
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
        if (hit !== -1 && hit < start) hit = next[i] = data.indexOf(patterns[i]!, start)
        if (hit !== -1 && hit < end) candidate = true
      }
      if (candidate) parser.parse(data.toString('utf8', start, end), state, acc.sink, acc.lines)
      else if (data[start] !== 0x7b || data[end - 1] !== 0x7d) acc.sink.skip('not a JSON object')
    }
    start = nl + 1
  }
}

interface Loaded {
  header: Header
  numbers: Float64Array
  index: Int32Array | null
}

// Cache file: "PLC3" | u32 header length | header JSON | padding to 8 | float64s (count × width) | int32s (index)
function loadCache(file: string, parser: LineParser<unknown>, path: string): Loaded | null {
  let data: Buffer
  try {
    data = readFileSync(file)
  } catch {
    return null
  }
  try {
    if (data.length < 8 || data.toString('latin1', 0, 4) !== 'PLC3') return null
    const headerLength = data.readUInt32LE(4)
    const header = JSON.parse(data.toString('utf8', 8, 8 + headerLength)) as Header
    if (
      header.magic !== 'pair-loop-transcript-cache' ||
      header.kind !== parser.kind ||
      header.version !== parser.version ||
      header.path !== path
    )
      return null
    const at = Math.ceil((8 + headerLength) / 8) * 8
    const count = header.count * parser.width
    const indexLength = header.index ?? 0
    if (data.length !== at + count * 8 + indexLength * 4) return null
    // views on the bytes just read when they are aligned (a large file gets its own buffer), else copies
    const aligned = (data.byteOffset + at) % 8 === 0
    const numbers = aligned ? new Float64Array(data.buffer, data.byteOffset + at, count) : new Float64Array(count)
    if (!aligned) new Uint8Array(numbers.buffer).set(data.subarray(at, at + count * 8))
    let index: Int32Array | null = null
    if (indexLength) {
      const from = at + count * 8
      index = aligned ? new Int32Array(data.buffer, data.byteOffset + from, indexLength) : new Int32Array(indexLength)
      if (!aligned) new Uint8Array(index.buffer).set(data.subarray(from, from + indexLength * 4))
    }
    return { header, numbers, index }
  } catch {
    return null
  }
}

function saveCache(file: string, header: Header, numbers: Float64Array, index: Int32Array[]): void {
  const head = Buffer.from(JSON.stringify(header))
  const prefix = Buffer.alloc(Math.ceil((8 + head.length) / 8) * 8)
  prefix.write('PLC3', 0, 'latin1')
  prefix.writeUInt32LE(head.length, 4)
  head.copy(prefix, 8)
  const bytes = (a: Float64Array | Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`
  try {
    mkdirSync(join(file, '..'), { recursive: true })
    const fd = openSync(temp, 'w', 0o600)
    try {
      // written from the arrays themselves: no copy of a few megabytes into one buffer first
      for (const part of [prefix, bytes(numbers), ...index.map(bytes)]) {
        for (let done = 0; done < part.length; ) done += writeSync(fd, part, done, part.length - done)
      }
    } finally {
      closeSync(fd)
    }
    renameSync(temp, file)
  } catch {
    // A cache that cannot be written only costs speed next time.
    try {
      unlinkSync(temp)
    } catch {}
  }
}
