// One path of the working tree looked at: lstat-ed first (or known a regular file from its folder's entry), then a
// regular file read once and hashed, a link's target read as a link, a folder noted (a repository inside, or not),
// anything else named and never opened. What changed from the base goes to the store. Only I/O on one path: it runs
// on the main thread or on a hashing thread alike.
import { type BigIntStats, existsSync, lstatSync, readlinkSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { type BlobKind, readRegularFile } from './files.ts'
import type { FolderFiles } from './folder-files.ts'
import { objectId } from './objects.ts'
import { indexEntry, type IndexEntry } from './private-index.ts'
import { noteSize, type ObjectStore, writeObject } from './store.ts'

export type Look =
  | { type: 'gone' }
  /** A file or link: its mode and blob, and its private index entry (null: changed too recently to be trusted). */
  | { type: 'blob'; mode: IndexEntry['mode']; oid: string; kind: BlobKind; entry: Uint8Array | null }
  | { type: 'folder'; repository: boolean }
  /** Not kept in the tree: not a regular file, link or folder, or a file that kept changing while it was read. */
  | { type: 'skipped'; what: string }

/** A file changed this close to the snapshot's start may not yet show a write made in the same instant (coarse clocks). */
export const RACY_NS = 2_000_000_000n

/**
 * `path` (from the repository's top; `full` its place on disk) against its base blob id, looked at now. With `folders`,
 * a path its folder lists as a regular file is opened without an lstat first.
 */
export function look(
  path: string,
  full: string,
  baseOid: string | null,
  store: ObjectStore,
  startNs: bigint,
  folders?: FolderFiles,
): Look {
  if (folders?.isFile(full)) {
    const found = lookFile(path, full, null, baseOid, store, startNs)
    if (found) return found // else no longer the regular file its folder listed: looked at from its lstat
  }
  // numbers are enough to tell a regular file (its nanoseconds come from the fstat of the file opened)
  const quick = lstatSync(full, { throwIfNoEntry: false })
  if (!quick) return { type: 'gone' }
  if (quick.isFile()) return lookFile(path, full, quick, baseOid, store, startNs)!
  const stats = lstatOrNull(full)
  if (!stats) return { type: 'gone' }
  if (stats.isFile()) return { type: 'skipped', what: 'changed while it was read' }
  if (stats.isSymbolicLink()) {
    const target = readlinkSync(full, { encoding: 'buffer' })
    const oid = objectId(store.format, 'blob', target)
    if (oid !== baseOid) writeObject(store, 'blob', target)
    return {
      type: 'blob',
      mode: '120000',
      oid,
      kind: 'text',
      entry: entryOf(path, stats, oid, '120000', store, startNs),
    }
  }
  if (stats.isDirectory()) return { type: 'folder', repository: existsSync(join(full, '.git')) }
  return { type: 'skipped', what: fileType(stats) }
}

/** A regular file read; null only without `stats` (its folder's word alone), when it was not one once opened. */
function lookFile(
  path: string,
  full: string,
  stats: Stats | null,
  baseOid: string | null,
  store: ObjectStore,
  startNs: bigint,
): Look | null {
  let seen = stats
  let read = readRegularFile(full, seen, store.format)
  if (!read && !seen) return null
  // replaced between lstat and open (an editor's rename-over): look again, a few times
  for (let again = 0; !read && again < 3; again++) {
    const now = lstatSync(full, { throwIfNoEntry: false })
    if (!now?.isFile()) return { type: 'skipped', what: 'changed while it was read' }
    seen = now
    read = readRegularFile(full, seen, store.format)
  }
  if (!read) return { type: 'skipped', what: 'changed while it was read' }
  if (read.oid !== baseOid && read.content)
    writeObject(store, 'blob', read.content) // the diff needs its bytes
  else if (read.oid !== baseOid && read.steady) noteSize(store, read.oid, Number(read.stats.size)) // named with its size
  const mode = read.stats.mode & 0o100n ? '100755' : '100644'
  // a file that grew or shrank while read is hashed as read, but never entered: it is read again next time
  const entry = read.steady ? entryOf(path, read.stats, read.oid, mode, store, startNs) : null
  return { type: 'blob', mode, oid: read.oid, kind: read.kind, entry }
}

/** The private index entry of what was just read, unless it changed too recently to be trusted (racy). */
function entryOf(
  path: string,
  stats: BigIntStats,
  oid: string,
  mode: IndexEntry['mode'],
  store: ObjectStore,
  startNs: bigint,
): Uint8Array | null {
  const changed = stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs
  return changed >= startNs - RACY_NS ? null : indexEntry(path, stats, oid, mode, store.format).raw
}

const lstatOrNull = (path: string): BigIntStats | null =>
  lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null

function fileType(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}
