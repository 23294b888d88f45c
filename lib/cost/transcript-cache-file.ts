// The transcript cache's file: one per transcript, under $PAIR_LOOP_HOME/cache/transcripts/, in a binary format
// that is read straight into typed arrays (a 200 MB transcript's cache is a few MB; parsing it as JSON would cost
// more than the check itself).
//
//   "PLC4" | u32 LE: header length | header (JSON, UTF-8) | zero padding to a multiple of 8 |
//   count × width float64 (the entries) | header.index int32 (the store's index, e.g. the de-duplication table)
//
// Numbers are in the machine's byte order (the cache never leaves the machine). The file is replaced whole, by
// writeFileAtomic: a reader sees the old cache or the new one. Anything that does not fit is no cache at all.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomic } from '../fsutil.ts'
import { hash52 } from './hash.ts'

const MAGIC = 'PLC4'

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
}

export interface LoadedCache {
  header: CacheHeader
  /** The entries, in an array with room for `spare` more (count × width are in use). */
  numbers: Float64Array
  /** The store's index, likewise with room for `spare` more int32s; null if none was saved. */
  index: Int32Array | null
}

/** The cache file of a transcript (a hash collision only costs speed: the header names the transcript). */
export function cacheFileFor(cacheDir: string, kind: string, path: string): string {
  const hex = (n: number) => n.toString(16).padStart(13, '0')
  return join(cacheDir, 'transcripts', `${kind}-${hex(hash52(path))}${hex(hash52(`${path}\n`))}.bin`)
}

/**
 * The cache of `path` if there is a usable one for this parser. `spare(header)` says how many more entries to make
 * room for (the entries the rest of the transcript may add), so that adding them copies nothing.
 */
export function loadCache(
  file: string,
  parser: { kind: string; version: number; width: number },
  path: string,
  spare: (header: CacheHeader) => number,
): LoadedCache | null {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return null
  }
  try {
    const size = fstatSync(fd).size
    const prefix = Buffer.alloc(8)
    if (size < 8 || readExactly(fd, prefix, 0) !== 8 || prefix.toString('latin1', 0, 4) !== MAGIC) return null
    const headerLength = prefix.readUInt32LE(4)
    const at = Math.ceil((8 + headerLength) / 8) * 8
    if (at > size) return null
    const headerBytes = Buffer.alloc(headerLength)
    if (readExactly(fd, headerBytes, 8) !== headerLength) return null
    const header = JSON.parse(headerBytes.toString('utf8')) as CacheHeader
    if (
      header.magic !== 'pair-loop-transcript-cache' ||
      header.kind !== parser.kind ||
      header.version !== parser.version ||
      header.path !== path ||
      !Number.isInteger(header.count) ||
      !Number.isInteger(header.index)
    )
      return null
    const used = header.count * parser.width
    if (size !== at + used * 8 + header.index * 4) return null
    const room = Math.max(0, Math.ceil(spare(header)))
    const numbers = new Float64Array(used + room * parser.width)
    if (readExactly(fd, bytesOf(numbers, used), at) !== used * 8) return null
    let index: Int32Array | null = null
    if (header.index > 0) {
      index = new Int32Array(header.index + room)
      if (readExactly(fd, bytesOf(index, header.index), at + used * 8) !== header.index * 4) return null
    }
    return { header, numbers, index }
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** Replace the cache file. A cache that cannot be written only costs speed next time. */
export function saveCache(file: string, header: CacheHeader, numbers: Float64Array, index: Int32Array[]): void {
  const head = Buffer.from(JSON.stringify(header))
  const prefix = Buffer.alloc(Math.ceil((8 + head.length) / 8) * 8)
  prefix.write(MAGIC, 0, 'latin1')
  prefix.writeUInt32LE(head.length, 4)
  head.copy(prefix, 8)
  const parts = [prefix, bytesOf(numbers, numbers.length), ...index.map((part) => bytesOf(part, part.length))]
  try {
    writeFileAtomic(file, Buffer.concat(parts))
  } catch {}
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
