// Reading a transcript that is still being written, incrementally: whole lines only, and never twice.
//
// Per file we remember (under $PAIR_LOOP_HOME/cache/transcripts/) how far it was read, the parser's state at that
// point, and every usage entry it yielded (numbers plus the de-duplication keys), keyed by path and checked
// against device, inode, size, mtime and the bytes just before the offset. The next scan reads only what was
// appended; a replaced, truncated or rewritten file is read again from the start. A partial last line (no newline
// yet) is left for the next scan, so it counts once, when complete.
import { createHash } from 'node:crypto'
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Where a parser puts what one line yielded. */
export interface Sink {
  /** One usage entry: exactly `width` numbers and `strings` strings. */
  entry(numbers: number[], strings?: string[]): void
  /** Index of a model name in this file's model list. */
  model(name: string): number
  /** The line counts as nothing, for this reason (shown in `sources`). */
  skip(reason: string): void
}

export interface LineParser<S> {
  /** Names the cache format: change `version` whenever the parser's output for a line changes. */
  kind: string
  version: number
  width: number
  strings: number
  /** Lines containing none of these byte strings are only checked to look like one JSON object. */
  patterns: string[]
  init(path: string): S
  parse(line: string, state: S, sink: Sink, lineNo: number): void
}

export interface Skip { reason: string; count: number; first_line: number }

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
  strings: string[]
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
    return emptyResult(path, code === 'ENOENT' ? 'missing' : 'unreadable', code === 'ENOENT' ? 'no such file' : describe(error))
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return emptyResult(path, 'unreadable', 'not a regular file')
    const cacheFile = cacheDir ? cacheFileFor(cacheDir, parser.kind, path) : null
    const cached = cacheFile ? loadCache(cacheFile, parser, path) : null
    const resume = cached && canResume(cached.header, st, fd) ? cached : null
    if (resume && resume.header.size === st.size && resume.header.mtimeMs === st.mtimeMs) {
      return toResult(path, resume.header, resume.numbers, resume.strings, 0, true, st.size)
    }
    const acc = new Accumulator(parser, resume)
    const state = (resume ? resume.header.state : parser.init(path)) as S
    const read = readLines(fd, acc.offset, parser, state, acc)
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
    }
    const numbers = acc.numbersView()
    if (cacheFile && read.bytes > 0) saveCache(cacheFile, header, numbers, acc.strings)
    return toResult(path, header, numbers, acc.strings, read.bytes, resume !== null, read.end)
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
    path, status, why, offset: 0, pending_bytes: 0, read_bytes: 0, from_cache: false, lines: 0,
    numbers: new Float64Array(0), strings: [], models: [], count: 0, skipped: [],
  }
}

function toResult(path: string, h: Header, numbers: Float64Array, strings: string[], readBytes: number, fromCache: boolean, end: number): ScanResult {
  return {
    path, status: 'read', offset: h.offset, pending_bytes: Math.max(0, end - h.offset), read_bytes: readBytes, from_cache: fromCache,
    lines: h.lines, numbers, strings, models: h.models, count: h.count, skipped: h.skipped,
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
  count = 0
  models: string[] = []
  strings: string[] = []
  private modelIndex = new Map<string, number>()
  private numbers: Float64Array
  private skipped = new Map<string, Skip>()
  private lineNo = 0

  constructor(private parser: LineParser<unknown>, resume: Loaded | null) {
    if (resume) {
      const h = resume.header
      this.offset = h.offset
      this.lines = h.lines
      this.count = h.count
      this.models = [...h.models]
      this.models.forEach((name, i) => this.modelIndex.set(name, i))
      this.strings = resume.strings
      for (const s of h.skipped) this.skipped.set(s.reason, { ...s })
      this.numbers = new Float64Array(Math.max(1024, resume.numbers.length * 2))
      this.numbers.set(resume.numbers)
    } else {
      this.numbers = new Float64Array(1024 * parser.width)
    }
  }

  readonly sink: Sink = {
    entry: (values, strings) => {
      const width = this.parser.width
      const at = this.count * width
      if (at + width > this.numbers.length) {
        const grown = new Float64Array(this.numbers.length * 2)
        grown.set(this.numbers)
        this.numbers = grown
      }
      for (let i = 0; i < width; i++) this.numbers[at + i] = values[i] ?? 0
      if (this.parser.strings) for (let i = 0; i < this.parser.strings; i++) this.strings.push(strings?.[i] ?? '')
      this.count++
    },
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

  setLine(n: number) { this.lineNo = n }
  numbersView() { return this.numbers.subarray(0, this.count * this.parser.width) }
  skippedList() { return [...this.skipped.values()] }
}

/**
 * Read from `start` to end of file in chunks; hand each complete line to the parser. Returns where the file ended.
 * Lines are found with Buffer.indexOf; a line is decoded and parsed only if it holds one of the parser's patterns.
 */
function readLines<S>(fd: number, start: number, parser: LineParser<S>, state: S, acc: Accumulator): { end: number; bytes: number } {
  const patterns = parser.patterns.map((p) => Buffer.from(p))
  let buffer = Buffer.allocUnsafe(CHUNK)
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

interface Loaded { header: Header; numbers: Float64Array; strings: string[] }

// Cache file: "PLC1" | u32 header length | header JSON | u32 strings length | strings JSON | padding to 8 | float64s
function loadCache(file: string, parser: LineParser<unknown>, path: string): Loaded | null {
  let data: Buffer
  try { data = readFileSync(file) } catch { return null }
  try {
    if (data.toString('latin1', 0, 4) !== 'PLC1') return null
    const headerLength = data.readUInt32LE(4)
    const header = JSON.parse(data.toString('utf8', 8, 8 + headerLength)) as Header
    if (header.magic !== 'pair-loop-transcript-cache' || header.kind !== parser.kind || header.version !== parser.version || header.path !== path) return null
    let at = 8 + headerLength
    const stringsLength = data.readUInt32LE(at)
    at += 4
    const strings = parser.strings ? (JSON.parse(data.toString('utf8', at, at + stringsLength)) as string[]) : []
    at += stringsLength
    at = Math.ceil(at / 8) * 8
    const count = header.count * parser.width
    if (data.length < at + count * 8 || strings.length !== header.count * parser.strings) return null
    const numbers = new Float64Array(count)
    Buffer.from(numbers.buffer).set(data.subarray(at, at + count * 8))
    return { header, numbers, strings }
  } catch {
    return null
  }
}

function saveCache(file: string, header: Header, numbers: Float64Array, strings: string[]): void {
  const head = Buffer.from(JSON.stringify(header))
  const text = Buffer.from(header.count && strings.length ? JSON.stringify(strings) : '[]')
  let at = 8 + head.length + 4 + text.length
  const padded = Math.ceil(at / 8) * 8
  const out = Buffer.alloc(padded + numbers.length * 8)
  out.write('PLC1', 0, 'latin1')
  out.writeUInt32LE(head.length, 4)
  head.copy(out, 8)
  at = 8 + head.length
  out.writeUInt32LE(text.length, at)
  text.copy(out, at + 4)
  Buffer.from(numbers.buffer, numbers.byteOffset, numbers.byteLength).copy(out, padded)
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`
  try {
    mkdirSync(join(file, '..'), { recursive: true })
    writeFileSync(temp, out, { mode: 0o600 })
    renameSync(temp, file)
  } catch {
    // A cache that cannot be written only costs speed next time.
    try { unlinkSync(temp) } catch {}
  }
}
