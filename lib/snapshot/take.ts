// One path of the listing into the snapshot: known from the private index (git's stat check calls it unchanged), or
// lstat-ed and read from the disk (a file hashed, a link stored as a link, a repository noted, anything else named and
// never opened), its change against the base noted.
import { fail } from '../ground/errors.ts'
import type { BlobKind } from './files.ts'
import { Looking, type PendingPath, type Threads } from './hashing.ts'
import { type Look, look } from './look.ts'
import type { Leaf, Manifest } from './manifest.ts'
import type { IndexEntry } from './private-index.ts'
import { type ObjectStore, showable } from './store.ts'
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
  /** Paths to look at, queued to be looked at together (takePending); null: each is looked at when taken. */
  pending: string[] | null
  /** Hashing threads started early for the pending paths (null: started when they are looked at, if worth it). */
  threads: Threads | null
  /** The first pending paths, handed to those threads before the base was read (null: none). */
  looking: Looking | null
}

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
    pending: null,
    threads: null,
    looking: null,
  }
}

/** One path of the listing into the manifest (or the skipped list), its change against the base noted. */
export function take(t: Taking, path: string): void {
  if (path.includes('\uFFFD'))
    // git's bytes were not UTF-8: no file of that name could be opened
    fail(
      'git_error',
      `${JSON.stringify(path)} in ${t.git.repo} is not a UTF-8 file name: pair-loop cannot snapshot it`,
      {
        path,
      },
    )
  const before = t.base.get(path) ?? null
  if (stillKnown(t, path, before)) return
  if (t.pending) return void t.pending.push(path)
  enter(t, path, before, look(path, `${t.git.repo}/${path}`, before?.oid ?? null, t.store, t.startNs))
}

/**
 * The paths queued by `take`, looked at (on several threads when there are many), then entered. The first ones may have
 * been handed over already (`t.looking`), compared with the ids the repository's index lists instead of the base's.
 */
export async function takePending(t: Taking): Promise<void> {
  const pending = t.pending ?? []
  t.pending = null
  const looking = t.looking ?? new Looking(t.git.repo, t.store, t.startNs, t.threads)
  t.looking = null
  t.threads = null
  // the early ones are pending's first, in order (any that are not: looked at again)
  const rest: PendingPath[] = []
  for (let i = looking.paths.length; i < pending.length; i++) {
    const path = pending[i]!
    rest.push({ path, base: t.base.get(path)?.oid ?? null })
  }
  looking.add(rest)
  // entered in order as they are known, while the threads look at the last ones
  await looking.finish((i, answer) => {
    if (i >= pending.length) return
    const path = pending[i]!
    const asked = looking.paths[i]!
    const before = t.base.get(path) ?? null
    const base = before?.oid ?? null
    let found = asked.path === path ? answer : null
    // compared with a hint that was not the base, a file equal to that hint but not to the base had no bytes stored
    // (the coder staged the change, or wrote the index): every changed blob the diff shows must be in the store, so
    // one that is not is looked at again, against the base
    if (!found || (found.type === 'blob' && found.oid !== base && !showable(t.store, found.oid, found.kind)))
      found = look(path, `${t.git.repo}/${path}`, base, t.store, t.startNs)
    enter(t, path, before, found)
  })
}

/** What a look found, into the manifest, the next private index, the skipped list or the repositories inside. */
function enter(t: Taking, path: string, before: Leaf | null, found: Look): void {
  if (found.type === 'skipped') t.skipped.push({ path, what: found.what })
  else if (found.type === 'folder') {
    if (found.repository) t.repositories.push({ path, full: `${t.git.repo}/${path}`, before })
    else if (t.gitlinks.has(path)) record(t, path, before, { mode: '160000', oid: t.gitlinks.get(path)! }) // not checked out
  } else if (found.type === 'blob') {
    const { mode, oid, kind, entry } = found
    t.rehashed++
    if (oid !== before?.oid) t.kinds.set(oid, kind)
    if (entry) {
      t.nextIndex.set(path, { oid, mode, raw: entry }) // a thread's: a view of its answer's buffer, not copied
      if (kind !== 'text') t.nextKinds[oid] = kind
    }
    record(t, path, before, before && before.oid === oid && before.mode === mode ? before : { mode, oid })
  }
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
  if (entry.oid !== before?.oid && !showable(t.store, entry.oid, kind)) return false
  t.nextIndex.set(path, entry)
  if (kind !== 'text') t.nextKinds[entry.oid] = kind
  const leaf =
    before && before.oid === entry.oid && before.mode === entry.mode ? before : { mode: entry.mode, oid: entry.oid }
  if (leaf !== before) t.kinds.set(entry.oid, kind)
  record(t, path, before, leaf)
  return true
}
