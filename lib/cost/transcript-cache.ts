// Reading a transcript that is still being written, incrementally: whole lines only, and never twice.
//
// Per file we remember (transcript-cache-file.ts) how far it was read, the parser's state at that point, and every
// usage entry it yielded (numbers, de-duplication keys as hashes), keyed by path and checked against device, inode,
// size, mtime and the bytes just before the offset. The next scan reads only what was appended; a replaced,
// truncated or rewritten file is read again from the start. A partial last line (no newline yet) is left for the
// next scan, so it counts once, when complete. The caller may keep its sums over the entries in the same file.
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { Accumulator, type LineParser, readLines } from './line-reader.ts'
import { isPartialSums, type PartialSums } from './sums.ts'
import { type CacheHeader, type Skip, cacheFileFor, loadCache, saveCache } from './transcript-cache-file.ts'

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

/**
 * The caller's sums over a transcript's entries, kept in its cache: given the scan and the saved sums (null when
 * there are none, or an entry they covered has changed since), returns the sums to keep.
 */
export type SumsHook = (scan: ScanResult, saved: PartialSums | null) => PartialSums | null

/** Room for the entries `unread` more bytes may add (a usage line is longer than this). */
const spareEntries = (unread: number) => Math.ceil(Math.max(0, unread) / 256) + 16

/** Scan `path` from where the cache left off (or from the start), returning every entry of the file's whole lines. */
export function scanFile<S>(path: string, parser: LineParser<S>, cacheDir: string | null, sums?: SumsHook): ScanResult {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    return emptyResult(path, missing ? 'missing' : 'unreadable', missing ? 'no such file' : describe(error))
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return emptyResult(path, 'unreadable', 'not a regular file')
    const cacheFile = cacheDir ? cacheFileFor(cacheDir, parser.kind, path) : null
    const cached = cacheFile ? loadCache(cacheFile, parser, path, (h) => spareEntries(st.size - h.offset)) : null
    const resume = cached && canResume(cached.header, st, fd) ? cached : null
    const saved = resume && isPartialSums(resume.header.sums, resume.header.count) ? resume.header.sums : null
    if (resume && resume.header.size === st.size && resume.header.mtimeMs === st.mtimeMs) {
      // nothing appended: the cache is the answer (and is written again only if the sums moved on)
      const h = resume.header
      const result = toResult(path, h, resume.numbers.subarray(0, h.count * parser.width), 0, true, st.size)
      const kept = sums ? sums(result, saved) : saved
      if (cacheFile && !sameSums(kept, saved)) {
        // the index in hand is the base's: only a delta can be written without the store (which this path skips)
        const plan = { width: parser.width, base: resume.base, changed: [], indexReplaced: false, deltaOnly: true }
        saveCache(cacheFile, { ...h, sums: kept }, result.numbers, [], plan)
      }
      return result
    }
    const acc = new Accumulator(parser, resume)
    const state = (resume ? resume.header.state : parser.init(path)) as S
    const read = readLines(fd, acc.offset, st.size - acc.offset, parser, state, acc)
    const after = fstatSync(fd)
    const index = acc.entries.index?.() ?? []
    const header: CacheHeader = {
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
      index: index.reduce((sum, part) => sum + part.length, 0),
      sums: null,
    }
    const numbers = acc.entries.view()
    const result = toResult(path, header, numbers, read.bytes, resume !== null, read.end)
    // saved sums still hold while every entry they covered is unchanged
    const valid = saved && saved.upTo <= acc.entries.firstChanged ? saved : null
    header.sums = sums ? sums(result, valid) : valid
    if (cacheFile && (read.bytes > 0 || !sameSums(header.sums, saved))) {
      const store = acc.entries
      const plan = {
        width: parser.width,
        base: resume?.base ?? null,
        changed: store.changed(),
        indexReplaced: store.indexReplaced,
      }
      saveCache(cacheFile, header, numbers, index, plan)
    }
    return result
  } catch (error) {
    return emptyResult(path, 'unreadable', describe(error))
  } finally {
    closeSync(fd)
  }
}

/** Saved sums are the same when they cover the same entries under the same key (their numbers follow from that). */
const sameSums = (a: unknown, b: PartialSums | null) =>
  a === b || (a !== null && b !== null && (a as PartialSums).key === b.key && (a as PartialSums).upTo === b.upTo)

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
  h: CacheHeader,
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

const TAIL = 64

/** Same file (device, inode), not shorter than what we counted, not rewritten in place, same bytes before the offset. */
function canResume(h: CacheHeader, st: Stats, fd: number): boolean {
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
