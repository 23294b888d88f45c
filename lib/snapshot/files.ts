// One file read from the disk for the snapshot: known a regular file first (its lstat, or its folder's entry), never a
// symlink followed, never anything but a regular file opened (a FIFO would hang the read), proven one on the opened
// descriptor, read once, hashed from the bytes read. What the reviewer is shown of it comes from those same bytes.
import { type BigIntStats, closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { extname } from 'node:path'
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
    const read = size <= WHOLE_FILE_LIMIT ? readWhole(fd, size, format, path) : hashInChunks(fd, size, format)
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
function readWhole(fd: number, size: number, format: ObjectFormat, path: string) {
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
  return { oid, kind: blobKind(content, path), content, complete: total === size }
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

/** Files with these names are source whatever bytes they hold: a NUL does not hide them (node runs such a file). */
const SOURCE = new Set(
  'js mjs cjs jsx ts mts cts tsx json py rb sh bash zsh go rs c h cc cpp hpp java kt swift php pl lua sql yml yaml toml ini md txt html htm css scss vue svelte xml'.split(
    ' ',
  ),
)

/** git calls a blob with a NUL in its first 8000 bytes binary; pair-loop shows it as text when it otherwise is. */
export function blobKind(content: Buffer, path: string): BlobKind {
  if (content.length > WHOLE_FILE_LIMIT) return 'big'
  if (!content.subarray(0, 8000).includes(0)) return 'text'
  if (SOURCE.has(extname(path).slice(1).toLowerCase()) || content.subarray(0, 2).toString('latin1') === '#!')
    return 'nul-text'
  return mostlyText(content) ? 'nul-text' : 'binary'
}

/** Valid UTF-8 once the NULs are set aside, with hardly any other control bytes. */
function mostlyText(content: Buffer): boolean {
  let controls = 0
  for (const byte of content)
    if (byte < 32 && byte !== 0 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) controls++
  if (controls > content.length / 100) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content.filter((byte) => byte !== 0))
    return true
  } catch {
    return false
  }
}
