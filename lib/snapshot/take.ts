// One path of the listing into the snapshot: known from the private index (git's stat check calls it unchanged), or
// lstat-ed and read from the disk (a file hashed, a link stored as a link, a repository noted, anything else named and
// never opened), its change against the base noted.
import { type BigIntStats, existsSync, lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../errors.ts'
import { isOwnFile } from '../git.ts'
import { type BlobKind, type ReadFile, readRegularFile } from './files.ts'
import type { Manifest, Leaf } from './manifest.ts'
import { type IndexEntry, indexEntry } from './private-index.ts'
import { objectId } from './objects.ts'
import { hasObject, type ObjectStore, writeObject } from './store.ts'
import type { RepoGit } from './verified.ts'

export interface Change {
  /** From the top of the repository the change is in. */
  path: string
  before: Leaf | null
  after: Leaf | null
}

/** What a snapshot is made of while its paths are taken. */
export interface Taking {
  git: RepoGit
  store: ObjectStore
  depth: number
  base: Manifest
  gitlinks: Map<string, string>
  /** The private index's entries to trust (null: none), its kinds, and the paths git's stat check calls changed. */
  known: Map<string, IndexEntry> | null
  knownKinds: Record<string, BlobKind>
  dirty: Set<string>
  /** When the snapshot began (ns): a file changed after this less the racy margin is never entered in the index. */
  startNs: bigint
  manifest: Manifest
  changes: Change[]
  /** How each blob this snapshot read from the disk reads (text, binary…), by id. */
  kinds: Map<string, BlobKind>
  skipped: { path: string; what: string }[]
  nextIndex: Map<string, IndexEntry>
  nextKinds: Record<string, BlobKind>
  /** Repositories checked out inside (submodules): snapshotted after the files. */
  repositories: { path: string; full: string; before: Leaf | null }[]
  rehashed: number
}

/** A file changed this close to the snapshot's start may not yet show a write made in the same instant (coarse clocks). */
export const RACY_NS = 2_000_000_000n

export function taking(fields: Pick<Taking, 'git' | 'store' | 'depth' | 'base' | 'gitlinks' | 'startNs'>): Taking {
  return {
    ...fields,
    known: null,
    knownKinds: {},
    dirty: new Set(),
    manifest: new Map(),
    changes: [],
    kinds: new Map(),
    skipped: [],
    nextIndex: new Map(),
    nextKinds: {},
    repositories: [],
    rehashed: 0,
  }
}

/** One path of the listing into the manifest (or the skipped list), its change against the base noted. */
export function take(t: Taking, path: string): void {
  if (t.depth === 0 && isOwnFile(path)) return
  if (path.includes('\uFFFD'))
    // git's bytes were not UTF-8: no file of that name could be opened
    fail(
      'git_error',
      `${JSON.stringify(path)} in ${t.git.repo} is not a UTF-8 file name: pair-loop cannot snapshot it`,
      {
        path,
      },
    )
  const full = `${t.git.repo}/${path}`
  const before = t.base.get(path) ?? null
  if (stillKnown(t, path, before)) return
  const stats = lstatOrNull(full)
  if (!stats) return // deleted: not in the tree
  let leaf: Leaf | null = null
  if (stats.isFile()) {
    const mode = stats.mode & 0o100n ? '100755' : '100644'
    const read = hashedFile(t, full, stats, before)
    if (read === null) t.skipped.push({ path, what: 'changed while it was read' })
    else {
      leaf = before && before.oid === read.oid && before.mode === mode ? before : { mode, oid: read.oid }
      remember(t, path, stats, read.oid, mode, read.kind)
    }
  } else if (stats.isSymbolicLink()) {
    const target = readlinkSync(full, { encoding: 'buffer' })
    const oid = objectId(t.git.format, 'blob', target)
    if (oid !== before?.oid) writeObject(t.store, 'blob', target)
    t.kinds.set(oid, 'text')
    leaf = before?.mode === '120000' && before.oid === oid ? before : { mode: '120000', oid }
    remember(t, path, stats, oid, '120000', 'text')
  } else if (stats.isDirectory()) {
    if (existsSync(join(full, '.git'))) t.repositories.push({ path, full, before })
    else if (t.gitlinks.has(path)) leaf = { mode: '160000', oid: t.gitlinks.get(path)! } // not checked out
  } else t.skipped.push({ path, what: fileType(stats) })
  if (leaf) record(t, path, before, leaf)
}

export function record(t: Taking, path: string, before: Leaf | null, leaf: Leaf): void {
  t.manifest.set(path, leaf)
  if (leaf !== before && (leaf.oid !== before?.oid || leaf.mode !== before.mode))
    t.changes.push({ path, before, after: leaf })
}

/**
 * A path whose entry in the private index git calls stat-clean: its blob id is known without reading it (nor, for an
 * unchanged file, even lstat-ing it). False: it must be looked at.
 */
function stillKnown(t: Taking, path: string, before: Leaf | null): boolean {
  const entry = t.known?.get(path)
  if (!entry || t.dirty.has(path)) return false
  const kind = t.knownKinds[entry.oid] ?? 'text'
  // a changed file's bytes must be in the store for the diff (a binary or too big one is named only)
  if (entry.oid !== before?.oid && kind !== 'big' && kind !== 'binary' && !hasObject(t.store, entry.oid)) return false
  t.nextIndex.set(path, entry)
  if (kind !== 'text') t.nextKinds[entry.oid] = kind
  const leaf =
    before && before.oid === entry.oid && before.mode === entry.mode ? before : { mode: entry.mode, oid: entry.oid }
  if (leaf !== before) t.kinds.set(entry.oid, kind)
  record(t, path, before, leaf)
  return true
}

/** Enter a file just read into the next private index, unless it changed too recently to be trusted (racy). */
function remember(t: Taking, path: string, stats: BigIntStats, oid: string, mode: IndexEntry['mode'], kind: BlobKind) {
  t.rehashed++
  const changed = stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs
  if (changed >= t.startNs - RACY_NS) return
  t.nextIndex.set(path, indexEntry(path, stats, oid, mode, t.git.format))
  if (kind !== 'text') t.nextKinds[oid] = kind
}

/** A file read and hashed; a changed file's bytes go to the store. Null: it changed under us. */
function hashedFile(t: Taking, full: string, stats: BigIntStats, before: Leaf | null): ReadFile | null {
  let read = readRegularFile(full, stats, t.git.format)
  // replaced between lstat and open (an editor's rename-over): look again, a few times
  for (let again = 0; !read && again < 3; again++) {
    const now = lstatOrNull(full)
    if (!now?.isFile()) return null
    read = readRegularFile(full, now, t.git.format)
  }
  if (!read) return null
  if (read.oid !== before?.oid) {
    t.kinds.set(read.oid, read.kind)
    if (read.content) writeObject(t.store, 'blob', read.content)
  }
  return read
}

export function lstatOrNull(path: string): BigIntStats | null {
  return lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null
}

function fileType(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}
