// The snapshot: the working tree as `git add -A` would commit it (HANDOFF.md aside), hashed by pair-loop from the
// bytes on disk into its own object store, its tree id the fingerprint of the change. Nothing the coder wrote into
// .git decides what is read: the work tree and git dir are pinned, no stat data comes from the index, no filter or
// attribute converts a byte, and the base is read object by object, each verified against its id.
import { existsSync, lstatSync, readlinkSync, type BigIntStats } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../errors.ts'
import { gitTry, isOwnFile, SUBMODULE_DEPTH } from '../git.ts'
import { type BlobKind, readRegularFile, statKey } from './files.ts'
import { listCommittable } from './listing.ts'
import { type Leaf, type Manifest, manifestTree, treeManifest } from './manifest.ts'
import { commitTree, type ObjectFormat, objectId } from './objects.ts'
import { openStatCache } from './stat-cache.ts'
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
    fail('git_error', `${repo} is not a git repository git can read (${result.stderr.trim().split('\n')[0] || 'no git dir'})`, { repo })
  return { repo, gitDir, format }
}

/** A commit's tree id, from the verified commit object. */
export async function commitTreeOf(git: RepoGit, commit: string, what: string): Promise<string> {
  const object = (await readVerified(git, [commit], what)).get(commit)
  if (!object || object.type !== 'commit') fail('git_error', `${what} is not a commit in ${git.repo}`, { repo: git.repo, commit })
  return commitTree(object.content)
}

async function snapshotAgainst(git: RepoGit, baseTree: string, options: SnapshotOptions): Promise<RepoSnapshot> {
  const depth = options.depth ?? 0
  const store = objectStore(options.home, git.format)
  const base = await treeManifest(git, baseTree, options.home, `the base tree ${baseTree.slice(0, 12)}`)
  const listed = await listCommittable(git)
  const startNs = BigInt(Date.now()) * 1_000_000n
  const cache = openStatCache(options.home, `${git.format}:${git.repo}`, startNs)
  const manifest: Manifest = new Map()
  const kinds = new Map<string, BlobKind>()
  const submodules: SubmoduleSnapshot[] = []
  const skipped: RepoSnapshot['skipped'] = []

  for (const path of listed.paths.sort()) {
    if (depth === 0 && isOwnFile(path)) continue
    if (!/^[^\0]+$/.test(path) || Buffer.from(path, 'utf8').toString('utf8') !== path || path.includes('\uFFFD'))
      fail('git_error', `${JSON.stringify(path)} in ${git.repo} is not a UTF-8 file name: pair-loop cannot snapshot it`, { path })
    const full = join(git.repo, path)
    let stats: BigIntStats
    try {
      stats = lstatSync(full, { bigint: true })
    } catch {
      continue // deleted: not in the tree
    }
    const before = base.get(path) ?? null
    if (stats.isSymbolicLink()) {
      const target = readlinkSync(full, { encoding: 'buffer' })
      const oid = before?.mode === '120000' && objectId(git.format, 'blob', target) === before.oid ? before.oid : writeObject(store, 'blob', target)
      kinds.set(oid, 'text')
      manifest.set(path, { mode: '120000', oid })
    } else if (stats.isFile()) {
      const mode = stats.mode & 0o100n ? '100755' : '100644'
      const oid = hashedFile(path, full, stats, before)
      if (oid) manifest.set(path, { mode, oid })
      else skipped.push({ path, what: 'changed while it was read' })
    } else if (stats.isDirectory()) {
      if (existsSync(join(full, '.git'))) {
        const sub = await submodule(path, full, before, depth)
        if (sub) {
          submodules.push(sub)
          manifest.set(path, sub.folded ? { mode: '40000', oid: sub.snapshot.tree } : { mode: '160000', oid: sub.head! })
        }
      } else if (listed.gitlinks.has(path)) manifest.set(path, { mode: '160000', oid: listed.gitlinks.get(path)! }) // not checked out
    } else skipped.push({ path, what: fileType(stats) })
  }
  cache.save()
  const tree = manifestTree(manifest, git.format)
  return { git, store, tree, baseTree, manifest, changes: changesBetween(base, manifest), kinds, submodules, skipped }

  /** A file's blob id: from the stat cache, or read; a changed file's bytes go to the store. Null: it changed under us. */
  function hashedFile(path: string, full: string, stats: BigIntStats, before: Leaf | null): string | null {
    const key = statKey(stats)
    const known = cache.get(path, key)
    if (known) {
      const [oid, kind] = known.split(':') as [string, BlobKind]
      const needed = oid !== before?.oid && kind !== 'big'
      if (!needed || hasObject(store, oid)) {
        kinds.set(oid, kind)
        return oid
      }
    }
    let read = readRegularFile(full, stats, git.format)
    // replaced between lstat and open (an editor's rename-over): look again, a few times
    for (let again = 0; !read && again < 3; again++) {
      const now = lstatOrNull(full)
      if (!now?.isFile()) return null
      read = readRegularFile(full, now, git.format)
    }
    if (!read) return null
    kinds.set(read.oid, read.kind)
    if (read.content && read.oid !== before?.oid) writeObject(store, 'blob', read.content)
    if (read.steady) cache.set(path, key, `${read.oid}:${read.kind}`, stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs)
    return read.oid
  }

  async function submodule(path: string, full: string, before: Leaf | null, at: number): Promise<SubmoduleSnapshot | null> {
    if (at >= SUBMODULE_DEPTH) return null
    const inner = await repoGit(full)
    const head = (await gitTry(full, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { env: cleanGitEnv() })).stdout.trim() || null
    const recorded = before?.mode === '160000' ? before.oid : null
    const headTree = head ? await commitTreeOf(inner, head, `the submodule ${path}'s commit ${head.slice(0, 12)}`) : null
    const against = (recorded && (await commitTreeOf(inner, recorded, `the submodule ${path}'s recorded commit ${recorded.slice(0, 12)}`).catch(() => null))) ?? headTree ?? emptyTreeId(inner.format)
    const snapshot = await snapshotAgainst(inner, against, { ...options, depth: at + 1 })
    return { path, recorded, head, folded: snapshot.tree !== headTree, snapshot }
  }
}

function lstatOrNull(path: string): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true })
  } catch {
    return null
  }
}

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
