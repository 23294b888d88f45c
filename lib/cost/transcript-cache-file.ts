// The transcript cache's files: per transcript, under $PAIR_LOOP_HOME/cache/transcripts/, a base and a delta, in a
// binary format read straight into typed arrays (a 200 MB transcript's cache is a few MB; JSON would cost more than
// the check itself). The base holds every entry and the store's index as of when it was written; the delta what
// changed since (the entries added, the base's entries changed in place, the header as of now), so a check writes
// about what it read rather than the whole cache. Each file is replaced whole by writeFileAtomic; a delta names
// the base it applies to, so a delta left beside a newer base is ignored. Anything that does not fit is no cache.
import { closeSync, fstatSync, openSync, readSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { hash52 } from './hash.ts'
import { context } from '../ground/context.ts'

const BASE = 'PLC4'
const DELTA = 'PLD4'
/** A delta is written while it holds at most this many entries (added, and old ones changed); then a new base. */
const DELTA_MAX_ROWS = 4096

export interface Skip {
  reason: string
  count: number
  first_line: number
}

export interface CacheHeader {
  magic: 'pair-loop-transcript-cache'
  /** The parser's kind and version: a cache written by another parser is not used. */
  kind: string
  version: number
  path: string
  /** The transcript as it was when read: device, inode, size, mtime, and the base64 of the bytes before `offset`. */
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
  /** The parser's state at `offset`. */
  state: unknown
  /** Length of the store's index (int32s after the entries), 0 if none. */
  index: number
  /** The ledger's sums over the first entries (see sums.ts), or null. */
  sums: unknown
  /** Names the base (a delta names the base it applies to). */
  stamp?: string
}

/** The base on disk: its stamp, its entries, and the base entries the delta on disk holds changed. */
export interface CacheBase {
  stamp: string
  count: number
  changed: number[]
}

interface DeltaHeader extends CacheHeader {
  base: { stamp: string; count: number }
  changed: number[]
}

export interface LoadedCache {
  /** As of the last check (the delta's header over the base's). */
  header: CacheHeader
  /** The entries, in an array with room for more (count × width are in use). */
  numbers: Float64Array
  /** The base's index, with room for more int32s; null if none was saved. */
  index: Int32Array | null
  /** How many entries the index covers (the base's: the delta's are added to it by the store). */
  indexed: number
  base: CacheBase
}

/** What a save may do: write a delta against the base loaded, or must write a new base. */
export interface SavePlan {
  width: number
  base: CacheBase | null
  /** Base entries changed in place by this check. */
  changed: number[]
  /** The store's index is no longer the base's (rebuilt): only a new base can hold it. */
  indexReplaced: boolean
  /** Write a delta or nothing (the index in hand is the base's, not one for every entry). */
  deltaOnly?: boolean
}

/** The base file of a transcript's cache (a hash collision only costs speed: the header names the transcript). */
export function cacheFileFor(cacheDir: string, kind: string, path: string): string {
  const hex = (n: number) => n.toString(16).padStart(13, '0')
  return join(cacheDir, 'transcripts', `${kind}-${hex(hash52(path))}${hex(hash52(`${path}\n`))}.bin`)
}

export const deltaFileFor = (file: string) => file.replace(/\.bin$/, '.delta')

interface Part<H> {
  fd: number
  size: number
  header: H
  /** Where the numbers start. */
  at: number
}

/** Open a cache file and read its header; null if it is missing or not one. */
function openPart<H>(file: string, magic: string): Part<H> | null {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return null
  }
  let part: Part<H> | null = null
  try {
    const size = fstatSync(fd).size
    const prefix = Buffer.alloc(8)
    if (size >= 8 && readExactly(fd, prefix, 0) === 8 && prefix.toString('latin1', 0, 4) === magic) {
      const length = prefix.readUInt32LE(4)
      const bytes = Buffer.alloc(length)
      if (readExactly(fd, bytes, 8) === length)
        part = { fd, size, header: JSON.parse(bytes.toString('utf8')) as H, at: Math.ceil((8 + length) / 8) * 8 }
    }
  } catch {}
  if (!part) closeSync(fd)
  return part
}

const fits = (h: CacheHeader, parser: { kind: string; version: number }, path: string) =>
  h.magic === 'pair-loop-transcript-cache' &&
  h.kind === parser.kind &&
  h.version === parser.version &&
  h.path === path &&
  Number.isInteger(h.count) &&
  h.count >= 0 &&
  Number.isInteger(h.index) &&
  h.index >= 0

/**
 * The cache of `path` if there is a usable one for this parser: the base, and the delta over it when it names this
 * base. `spare(header)` says how many more entries to make room for (what the rest of the transcript may add).
 */
export function loadCache(
  file: string,
  parser: { kind: string; version: number; width: number },
  path: string,
  spare: (header: CacheHeader) => number,
): LoadedCache | null {
  const w = parser.width
  const base = openPart<CacheHeader>(file, BASE)
  if (!base) return null
  const h = base.header
  let delta: Part<DeltaHeader> | null = null
  try {
    if (!fits(h, parser, path) || typeof h.stamp !== 'string') return null
    if (base.size !== base.at + h.count * w * 8 + h.index * 4) return null
    delta = openPart<DeltaHeader>(deltaFileFor(file), DELTA)
    const d = delta?.header
    const usable =
      d &&
      fits(d, parser, path) &&
      d.base?.stamp === h.stamp &&
      d.base.count === h.count &&
      d.count >= h.count &&
      Array.isArray(d.changed) &&
      d.changed.every((i) => Number.isInteger(i) && i >= 0 && i < h.count) &&
      delta!.size === delta!.at + (d.changed.length + d.count - h.count) * w * 8
    const now: CacheHeader = usable ? { ...withoutBase(d), index: h.index, stamp: h.stamp } : h
    const room = Math.max(0, Math.ceil(spare(now)))
    const numbers = new Float64Array((now.count + room) * w)
    if (readExactly(base.fd, bytesOf(numbers, h.count * w), base.at) !== h.count * w * 8) return null
    let index: Int32Array | null = null
    if (h.index > 0) {
      index = new Int32Array(h.index + (now.count - h.count) + room)
      if (readExactly(base.fd, bytesOf(index, h.index), base.at + h.count * w * 8) !== h.index * 4) return null
    }
    if (usable) {
      const changed = new Float64Array(d.changed.length * w)
      if (readExactly(delta!.fd, bytesOf(changed, changed.length), delta!.at) !== changed.length * 8) return null
      d.changed.forEach((i, k) => {
        numbers.set(changed.subarray(k * w, (k + 1) * w), i * w)
      })
      const added = new Uint8Array(numbers.buffer, h.count * w * 8, (d.count - h.count) * w * 8)
      if (readExactly(delta!.fd, added, delta!.at + changed.length * 8) !== added.length) return null
    }
    const kept = usable
      ? { stamp: h.stamp, count: h.count, changed: d.changed }
      : { stamp: h.stamp, count: h.count, changed: [] }
    return { header: now, numbers, index, indexed: h.count, base: kept }
  } catch {
    return null
  } finally {
    closeSync(base.fd)
    if (delta) closeSync(delta.fd)
  }
}

/** A cache file is checked when read (magic, header, sizes) and rebuilt when unusable: no flush to the disk. */
const CACHE = { durable: false }

/**
 * Keep the cache: as a delta over the base loaded while what changed since it is small, else as a new base (the
 * delta beside it then names an older base, and is removed). A cache that cannot be written only costs speed.
 */

export function saveCache(
  file: string,
  header: CacheHeader,
  numbers: Float64Array,
  index: Int32Array[],
  plan: SavePlan,
): void {
  const w = plan.width
  const base = plan.base
  try {
    if (base && !plan.indexReplaced && header.count >= base.count) {
      const changed = [...new Set([...base.changed, ...plan.changed.filter((i) => i < base.count)])].sort(
        (a, b) => a - b,
      )
      const added = header.count - base.count
      if (changed.length + added <= DELTA_MAX_ROWS) {
        const rows = new Float64Array(changed.length * w)
        changed.forEach((i, k) => {
          rows.set(numbers.subarray(i * w, (i + 1) * w), k * w)
        })
        const d: DeltaHeader = { ...header, base: { stamp: base.stamp, count: base.count }, changed }
        const parts = [bytesOf(rows, rows.length), bytesOf(numbers.subarray(base.count * w), added * w)]
        writeFileAtomic(deltaFileFor(file), image(DELTA, d, parts), 0o600, CACHE)
        return
      }
    }
    if (plan.deltaOnly) return
    const stamp = `${context().now().toString(36)}.${context().pid}.${Math.random().toString(36).slice(2, 10)}`
    const parts = [bytesOf(numbers, header.count * w), ...index.map((part) => bytesOf(part, part.length))]
    writeFileAtomic(file, image(BASE, { ...header, stamp }, parts), 0o600, CACHE)
    try {
      unlinkSync(deltaFileFor(file))
    } catch {}
  } catch {}
}

/** A delta's header as of now, without what names its base. */
function withoutBase(d: DeltaHeader): CacheHeader {
  const { base: _base, changed: _changed, ...header } = d
  return header
}

/** A cache file's bytes: magic, header length, header, padding to 8, the parts. */
function image(magic: string, header: CacheHeader, parts: Uint8Array[]): Buffer {
  const head = Buffer.from(JSON.stringify(header))
  const prefix = Buffer.alloc(Math.ceil((8 + head.length) / 8) * 8)
  prefix.write(magic, 0, 'latin1')
  prefix.writeUInt32LE(head.length, 4)
  head.copy(prefix, 8)
  return Buffer.concat([prefix, ...parts])
}

/** The bytes of the first `length` elements of a typed array (a view, no copy). */
const bytesOf = (array: Float64Array | Int32Array, length: number) =>
  new Uint8Array(array.buffer, array.byteOffset, length * array.BYTES_PER_ELEMENT)

/** Read into the whole of `into` from `position`, however many reads that takes; returns the bytes read. */
function readExactly(fd: number, into: Uint8Array, position: number): number {
  let done = 0
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/** The transcript a cache file was made for, from its header; null when it is not a readable cache file. */
export function transcriptOfCacheFile(file: string): string | null {
  const part = openPart<CacheHeader>(file, BASE)
  if (!part) return null
  closeSync(part.fd)
  return typeof part.header.path === 'string' ? part.header.path : null
}
