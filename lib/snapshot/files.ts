// One file read from the disk for the snapshot: known a regular file first (its lstat, or its folder's entry), never a
// symlink followed, never anything but a regular file opened (a FIFO would hang the read), proven one on the opened
// descriptor, read once, hashed from the bytes read. What the reviewer is shown of it comes from those same bytes.
import { type BigIntStats, closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { hexDigest } from '../ground/digest.ts'
import { objectHasher, objectId, type ObjectFormat } from './objects.ts'

/** Files up to this size are kept whole (to be shown); bigger ones are hashed a chunk at a time and named only. */
export const WHOLE_FILE_LIMIT = 16 * 1024 * 1024
const CHUNK = 1 << 20

/** How a blob reads: text; text with NUL bytes (shown with them escaped); binary or too big (named only). */
export type BlobKind = 'text' | 'nul-text' | 'binary' | 'big'

export interface ReadFile {
  oid: string
  kind: BlobKind
  /** The bytes, when kept whole: a view of a buffer the next read reuses, so used (stored) before any other read. */
  content: Buffer | null
  /** The file was read as long as its stat said (it did not grow or shrink while read): the hash may be cached. */
  steady: boolean
  /** The stat of the file opened, with nanoseconds: what the private index records of it. */
  stats: BigIntStats
}

/**
 * A regular file's blob, read once; null when what is at the path is not a regular file once opened, or (`seen`: its
 * lstat) no longer the one lstat saw.
 */
export function readRegularFile(
  path: string,
  seen: Pick<Stats, 'ino' | 'dev'> | null,
  format: ObjectFormat,
): ReadFile | null {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return null // gone, or replaced by a link since lstat
  }
  try {
    const before = fstatSync(fd, { bigint: true })
    if (!before.isFile()) return null
    // lstat's numbers are the same 64-bit values rounded the same way: equal for the same file
    if (seen && (Number(before.ino) !== seen.ino || Number(before.dev) !== seen.dev)) return null
    const size = Number(before.size)
    const read = size <= WHOLE_FILE_LIMIT ? readWhole(fd, size, format) : hashInChunks(fd, size, format)
    // a write while it was read changes its ctime, so its stat no longer matches the one it is cached under (and one
    // changed in the last instants is never entered in the private index: snapshot.ts): no second fstat is needed
    return { oid: read.oid, kind: read.kind, content: read.content, steady: read.complete, stats: before } // no spread: it costs
  } finally {
    closeSync(fd)
  }
}

/** One buffer for every file read whole (a fresh one per file costs more in garbage collection than the hash). */
let scratch = Buffer.allocUnsafe(1 << 16)

/**
 * The whole file: the size fstat gave, then a look for more (a file that grew while read is hashed as read). It is
 * read just after its object header in the buffer, so a file of the size fstat gave is hashed in one call.
 */
function readWhole(fd: number, size: number, format: ObjectFormat) {
  const header = `blob ${size}\0`
  const at = header.length
  if (scratch.length < at + size + 1) scratch = Buffer.allocUnsafe(Math.max(at + size + 1, scratch.length * 2))
  scratch.write(header, 0, 'latin1')
  const first = scratch.subarray(at, at + size + 1)
  let total = 0
  // a regular file's read comes back short only at its end: no second read to be told so (one call fewer per file)
  for (let want = first.length; total < first.length; ) {
    const got = readSync(fd, first, total, want, null)
    total += got
    if (got < want) break
    want = first.length - total
  }
  const chunks = [first.subarray(0, total)]
  if (total > size)
    for (let got = 1; got > 0 && total <= WHOLE_FILE_LIMIT; total += got) {
      const more = Buffer.allocUnsafe(CHUNK)
      got = readSync(fd, more, 0, CHUNK, null)
      chunks.push(more.subarray(0, got))
    }
  const content = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  const oid = total === size ? hexDigest(scratch.subarray(0, at + size), format) : objectId(format, 'blob', content)
  return { oid, kind: blobKind(content), content, complete: total === size }
}

/** A file too big to keep: hashed as its stat said it was; one that grew or shrank while read is not steady. */
function hashInChunks(fd: number, size: number, format: ObjectFormat) {
  const hash = objectHasher(format, 'blob', size)
  const buffer = Buffer.allocUnsafe(CHUNK)
  let total = 0
  while (total < size) {
    const got = readSync(fd, buffer, 0, Math.min(CHUNK, size - total), null)
    if (got === 0) break
    hash.update(buffer.subarray(0, got))
    total += got
  }
  if (total < size) hash.update(Buffer.alloc(size - total)) // shrank: a placeholder id, never cached (not steady)
  const more = readSync(fd, buffer, 0, 1, null) > 0
  return { oid: hash.digest('hex'), kind: 'big' as const, content: null, complete: total === size && !more }
}

/**
 * git calls a blob with a NUL in its first 8000 bytes binary; pair-loop judges it as the programs that run it would:
 * make, a shell, awk or an interpreter reads past a stray NUL or an invalid byte. Binary only when it truly is: its
 * NULs many (or its other bytes not text in any encoding the diff could show, UTF-8 or a single-byte one), with the
 * control bytes no text holds. Shown as text, a NUL is made visible (diff.ts) and an invalid byte reads as U+FFFD.
 */
export function blobKind(content: Buffer): BlobKind {
  if (content.length > WHOLE_FILE_LIMIT) return 'big'
  if (!content.subarray(0, 8000).includes(0)) return 'text'
  return looksBinary(content) ? 'binary' : 'nul-text'
}

/** Whitespace and ESC: control bytes text holds (tab, newline, vertical tab, form feed, return, escape). */
const TEXT_CONTROLS = new Set([8, 9, 10, 11, 12, 13, 27])

/**
 * Binary: NUL-heavy (more than one, and one in a thousand bytes or more) and, the NULs set aside, control bytes no
 * text holds (C0 but whitespace, DEL) past one in a hundred. NULs alone (UTF-16, a padded table) never make a file
 * binary. Bytes 0x80–0xff are text in some encoding git's diff shows (UTF-8, Latin-1): they do not count.
 */
function looksBinary(content: Buffer): boolean {
  let nuls = 0
  let controls = 0
  for (const byte of content) {
    if (byte === 0) nuls++
    else if ((byte < 32 && !TEXT_CONTROLS.has(byte)) || byte === 127) controls++
  }
  return nuls > 1 && nuls * 1000 >= content.length && controls * 100 > content.length - nuls
}
