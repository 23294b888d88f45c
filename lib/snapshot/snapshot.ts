// The snapshot: the working tree as `git add -A` would commit it (HANDOFF.md aside), hashed by pair-loop from the
// bytes on disk into its own object store, its tree id the fingerprint of the change. Nothing the coder wrote into
// .git decides what is read: the work tree and git dir are pinned, no stat data comes from the index, no filter or
// attribute converts a byte, and the base is read object by object, each verified against its id.
import { type BigIntStats, existsSync, lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../errors.ts'
import { gitTry, isOwnFile, SUBMODULE_DEPTH } from '../git.ts'
import { type BlobKind, type ReadFile, readRegularFile } from './files.ts'
import {
  type IndexEntry,
  indexEntry,
  privateIndexPath,
  readKinds,
  readPrivateIndex,
  statDirty,
  writeKinds,
  writePrivateIndex,
} from './private-index.ts'
import { listCommittable } from './listing.ts'
import { type Leaf, type Manifest, manifestTree, treeManifest } from './manifest.ts'
import { commitTree, type ObjectFormat, objectId } from './objects.ts'
import { hasObject, type ObjectStore, objectStore, writeObject } from './store.ts'
import { cleanGitEnv, readVerified, type RepoGit } from './verified.ts'

export interface Change {
  /** From the top of the repository the change is in. */
  path: string
  before: Leaf | null
  after: Leaf | null
}

export interface SubmoduleSnapshot {
  path: string
  /** The commit the outer base records for it (null: new since base). */
  recorded: string | null
  /** Its checked-out commit. */
  head: string | null
  /** Its work tree differs from its commit: a gitlink cannot ship that, so its tree is folded in instead. */
  folded: boolean
  snapshot: RepoSnapshot
}

export interface RepoSnapshot {
  git: RepoGit
  store: ObjectStore
  /** The fingerprint: git's tree id for these files (with a folded tree for a submodule with uncommitted changes). */
  tree: string
  baseTree: string
  /** The base tree's leaves, every object verified. */
  base: Manifest
  manifest: Manifest
  changes: Change[]
  /** How each blob this snapshot read from the disk reads (text, binary…), by id. */
  kinds: Map<string, BlobKind>
  submodules: SubmoduleSnapshot[]
  /** Paths that are not regular files, links or repositories (a FIFO, a socket): named, never opened, not in the tree. */
  skipped: { path: string; what: string }[]
}

export interface SnapshotOptions {
  home: string
  depth?: number
}

/** The working tree of `repo` against the base commit, snapshotted. */
export async function takeSnapshot(repo: string, baseCommit: string, options: SnapshotOptions): Promise<RepoSnapshot> {
  const git = await repoGit(repo)
  const baseTree = await commitTreeOf(git, baseCommit, `the base commit ${baseCommit.slice(0, 12)}`)
  return snapshotAgainst(git, baseTree, options)
}

/** The repository's git dir and object format (asked of git with the work tree as cwd; the answers are not trusted for bytes). */
export async function repoGit(repo: string): Promise<RepoGit> {
  const result = await gitTry(repo, ['rev-parse', '--absolute-git-dir', '--show-object-format'], { env: cleanGitEnv() })
  const [gitDir, format] = result.stdout.trim().split('\n')
  if (!result.ok || !gitDir || (format !== 'sha1' && format !== 'sha256'))
    fail(
      'git_error',
      `${repo} is not a git repository git can read (${result.stderr.trim().split('\n')[0] || 'no git dir'})`,
      { repo },
    )
  return { repo, gitDir, format }
}

/** A commit's tree id, from the verified commit object. */
export async function commitTreeOf(git: RepoGit, commit: string, what: string): Promise<string> {
  const object = (await readVerified(git, [commit], what)).get(commit)
  if (object?.type !== 'commit') fail('git_error', `${what} is not a commit in ${git.repo}`, { repo: git.repo, commit })
  return commitTree(object.content)
}

async function snapshotAgainst(git: RepoGit, baseTree: string, options: SnapshotOptions): Promise<RepoSnapshot> {
  const depth = options.depth ?? 0
  const store = objectStore(options.home, git.format)
  const listing = listCommittable(git) // asked first: git walks for untracked files while the base is read
  const base = await treeManifest(git, baseTree, options.home, `the base tree ${baseTree.slice(0, 12)}`)
  const startNs = BigInt(Date.now()) * 1_000_000n
  const indexFile = privateIndexPath(options.home, git)
  let known = readPrivateIndex(indexFile, git.format)
  const knownKinds = known ? readKinds(indexFile) : {}
  // an index git cannot read (damaged on disk) is no help: every file is read, and the index written anew
  const dirtyNow = known ? statDirty(git, indexFile).catch(() => null) : Promise.resolve(new Set<string>())
  const nextIndex = new Map<string, IndexEntry>()
  const nextKinds: Record<string, BlobKind> = {}
  let rehashed = 0
  const manifest: Manifest = new Map()
  const changes: Change[] = []
  const kinds = new Map<string, BlobKind>()
  const submodules: SubmoduleSnapshot[] = []
  const skipped: RepoSnapshot['skipped'] = []

  const { paths, gitlinks } = await listing.cached
  const checked = await dirtyNow
  if (checked === null) known = null
  const dirty = checked ?? new Set<string>()
  const repositories: { path: string; full: string; before: Leaf | null }[] = [] // checked out inside: after the files
  for (const path of paths) take(path)
  for (const path of await listing.others) take(path) // never in the index: never listed twice
  for (const { path, full, before } of repositories) {
    const sub = await submodule(path, full, before, depth)
    if (!sub) continue
    submodules.push(sub)
    record(path, before, sub.folded ? { mode: '40000', oid: sub.snapshot.tree } : { mode: '160000', oid: sub.head! })
  }
  for (const [path, leaf] of base) if (!manifest.has(path)) changes.push({ path, before: leaf, after: null })
  // rewritten once enough files were hashed again (the few left out are hashed again next time, which is cheap)
  if (known === null || rehashed > REWRITE_AFTER) {
    writePrivateIndex(indexFile, nextIndex, git.format)
    writeKinds(indexFile, nextKinds)
  }
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const tree = manifestTree(manifest, git.format)
  return { git, store, tree, baseTree, base, manifest, changes, kinds, submodules, skipped }

  /** One path of the listing into the manifest (or the skipped list), its change against the base noted. */
  function take(path: string): void {
    if (depth === 0 && isOwnFile(path)) return
    if (path.includes('\uFFFD'))
      // git's bytes were not UTF-8: no file of that name could be opened
      fail(
        'git_error',
        `${JSON.stringify(path)} in ${git.repo} is not a UTF-8 file name: pair-loop cannot snapshot it`,
        { path },
      )
    const full = `${git.repo}/${path}`
    const before = base.get(path) ?? null
    if (stillKnown(path, before)) return
    const stats = lstatOrNull(full)
    if (!stats) return // deleted: not in the tree
    let leaf: Leaf | null = null
    if (stats.isFile()) {
      const mode = stats.mode & 0o100n ? '100755' : '100644'
      const read = hashedFile(full, stats, before)
      if (read === null) skipped.push({ path, what: 'changed while it was read' })
      else {
        leaf = before && before.oid === read.oid && before.mode === mode ? before : { mode, oid: read.oid }
        remember(path, stats, read.oid, mode, read.kind)
      }
    } else if (stats.isSymbolicLink()) {
      const target = readlinkSync(full, { encoding: 'buffer' })
      const oid = objectId(git.format, 'blob', target)
      if (oid !== before?.oid) writeObject(store, 'blob', target)
      kinds.set(oid, 'text')
      leaf = before?.mode === '120000' && before.oid === oid ? before : { mode: '120000', oid }
      remember(path, stats, oid, '120000', 'text')
    } else if (stats.isDirectory()) {
      if (existsSync(join(full, '.git'))) repositories.push({ path, full, before })
      else if (gitlinks.has(path)) leaf = { mode: '160000', oid: gitlinks.get(path)! } // not checked out
    } else skipped.push({ path, what: fileType(stats) })
    if (leaf) record(path, before, leaf)
  }

  function record(path: string, before: Leaf | null, leaf: Leaf): void {
    manifest.set(path, leaf)
    if (leaf !== before && (leaf.oid !== before?.oid || leaf.mode !== before.mode))
      changes.push({ path, before, after: leaf })
  }

  /**
   * A path whose entry in the private index git calls stat-clean: its blob id is known without reading it (nor, for an
   * unchanged file, even lstat-ing it). False: it must be looked at.
   */
  function stillKnown(path: string, before: Leaf | null): boolean {
    const entry = known?.get(path)
    if (!entry || dirty.has(path)) return false
    const kind = knownKinds[entry.oid] ?? 'text'
    // a changed file's bytes must be in the store for the diff (a binary or too big one is named only)
    if (entry.oid !== before?.oid && kind !== 'big' && kind !== 'binary' && !hasObject(store, entry.oid)) return false
    nextIndex.set(path, entry)
    if (kind !== 'text') nextKinds[entry.oid] = kind
    const leaf =
      before && before.oid === entry.oid && before.mode === entry.mode ? before : { mode: entry.mode, oid: entry.oid }
    if (leaf !== before) kinds.set(entry.oid, kind)
    record(path, before, leaf)
    return true
  }

  /** Enter a file just read into the next private index, unless it changed too recently to be trusted (racy). */
  function remember(path: string, stats: BigIntStats, oid: string, mode: IndexEntry['mode'], kind: BlobKind): void {
    rehashed++
    const changed = stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs
    if (changed >= startNs - RACY_NS) return
    nextIndex.set(path, indexEntry(path, stats, oid, mode, git.format))
    if (kind !== 'text') nextKinds[oid] = kind
  }

  /** A file read and hashed; a changed file's bytes go to the store. Null: it changed under us. */
  function hashedFile(full: string, stats: BigIntStats, before: Leaf | null): ReadFile | null {
    let read = readRegularFile(full, stats, git.format)
    // replaced between lstat and open (an editor's rename-over): look again, a few times
    for (let again = 0; !read && again < 3; again++) {
      const now = lstatOrNull(full)
      if (!now?.isFile()) return null
      read = readRegularFile(full, now, git.format)
    }
    if (!read) return null
    if (read.oid !== before?.oid) {
      kinds.set(read.oid, read.kind)
      if (read.content) writeObject(store, 'blob', read.content)
    }
    return read
  }

  async function submodule(
    path: string,
    full: string,
    before: Leaf | null,
    at: number,
  ): Promise<SubmoduleSnapshot | null> {
    if (at >= SUBMODULE_DEPTH) return null
    const inner = await repoGit(full)
    const head =
      (
        await gitTry(full, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { env: cleanGitEnv() })
      ).stdout.trim() || null
    const recorded = before?.mode === '160000' ? before.oid : null
    const headTree = head
      ? await commitTreeOf(inner, head, `the submodule ${path}'s commit ${head.slice(0, 12)}`)
      : null
    const against =
      (recorded &&
        (await commitTreeOf(inner, recorded, `the submodule ${path}'s recorded commit ${recorded.slice(0, 12)}`).catch(
          () => null,
        ))) ??
      headTree ??
      emptyTreeId(inner.format)
    const snapshot = await snapshotAgainst(inner, against, { ...options, depth: at + 1 })
    return { path, recorded, head, folded: snapshot.tree !== headTree, snapshot }
  }
}

function lstatOrNull(path: string): BigIntStats | null {
  return lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null
}

/** A file changed this close to the snapshot's start may not yet show a write made in the same instant (coarse clocks). */
const RACY_NS = 2_000_000_000n
/** Hashed files past which the private index is written again. */
const REWRITE_AFTER = 20

export const emptyTreeId = (format: ObjectFormat) => objectId(format, 'tree', Buffer.alloc(0))

function fileType(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/** The leaves that differ between two manifests, by path. */
export function changesBetween(before: Manifest, after: Manifest): Change[] {
  const changes: Change[] = []
  for (const [path, leaf] of after) {
    const old = before.get(path)
    if (!old || old.oid !== leaf.oid || old.mode !== leaf.mode) changes.push({ path, before: old ?? null, after: leaf })
  }
  for (const [path, leaf] of before) if (!after.has(path)) changes.push({ path, before: leaf, after: null })
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
