// The snapshot: the working tree as `git add -A` would commit it (no name set aside: pair-loop's HANDOFF.md is kept
// out by the exclude file, as git keeps it out), hashed by pair-loop from the bytes on disk into its own object store,
// its tree id the fingerprint of the change. Nothing the coder wrote into .git decides what is read: the work tree and
// git dir are pinned, no stat data comes from the index, no filter or attribute converts a byte, and the base is read
// object by object, each verified against its id.
import { context } from '../ground/context.ts'
import { existsSync, lstatSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../ground/errors.ts'
import { fileSizeOr, writeFileAtomic } from '../ground/fsutil.ts'
import type { BlobKind } from './files.ts'
import {
  type GitLayout,
  layoutFrom,
  perCommand,
  plainGitTry,
  repositoryLayout,
  SUBMODULE_DEPTH,
} from '../ground/git.ts'
import { Looking, type PendingPath, startThreads, stopThreads, type Threads, threadsLikelyUsed } from './hashing.ts'
import { indexChecksum, type LastSnapshot, readLastSnapshot, writeLastSnapshot } from './last-snapshot.ts'
import { type IndexListing, listCommittable } from './listing.ts'
import {
  keepManifest,
  type Leaf,
  type Manifest,
  manifestTree,
  readManifest,
  reusableFolders,
  treeManifest,
} from './manifest.ts'
import { type MovedFrom, movedSubmodules } from './moved-submodules.ts'
import { commitTree, type ObjectFormat, objectId } from './objects.ts'
import {
  privateIndexPath,
  readKinds,
  readPrivateIndex,
  statDirty,
  writeKinds,
  writePrivateIndex,
} from './private-index.ts'
import { type ObjectStore, objectStore, showable } from './store.ts'
import { type Change, record, take, takePending, type Taking, taking } from './take.ts'
import {
  callerGitIsInert,
  cleanGitEnv,
  type ObjectReader,
  type ObjectSession,
  objectSession,
  readVerified,
  type RepoGit,
} from './verified.ts'

export interface SubmoduleSnapshot {
  path: string
  /** The commit the outer base records for it (null: new since base), at its path or where it was moved from. */
  recorded: string | null
  /** Its path at base when the change moved it (.gitmodules names it so); null: at its own path, or new. */
  moved_from: string | null
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
  /** The base tree's leaves, every object verified (read when asked: a snapshot known unchanged never needs them). */
  base: () => Promise<Manifest>
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
  const objects = objectSession(git)
  // the base commit read (and verified) while git lists the paths, asked once it has begun to
  return snapshotAgainst(git, () => verifiedTreeOf(git, baseCommit, options.home, objects.read), options, objects)
}

const repoGitOnce = perCommand<RepoGit>()

/** The repository's git dir and object format, asked once per command (a snapshot and the head check both need them). */
export const repoGit = (repo: string): Promise<RepoGit> => repoGitOnce(repo, () => askRepoGit(repo))

/** The git dir and object format asked of git with the work tree as cwd (the answers are not trusted for bytes). */
async function askRepoGit(repo: string): Promise<RepoGit> {
  const known = await layoutAlreadyAsked(repo)
  if (known) return { repo, ...known }
  // no content is converted: the config's filter and diff drivers need not be listed first (a process fewer, in series)
  const asked = await plainGitTry(repo, ['rev-parse', '--absolute-git-dir', '--show-object-format'], {
    env: cleanGitEnv(),
  })
  const [gitDir = '', format = ''] = asked.stdout.trim().split('\n')
  const layout = asked.ok ? layoutFrom(gitDir, format) : null
  if (!layout) {
    const said = asked.ok ? '' : asked.stderr.trim().split('\n')[0] || `exit ${asked.exitCode}`
    fail('git_error', `${repo} is not a git repository git can read (${said || 'no git dir'})`, { repo })
  }
  return { repo, ...layout }
}

/**
 * The git dir and format the command's one rev-parse gave (lib/ground/git.ts repositoryFacts), where asking alone with
 * the caller's GIT_* variables dropped must find the same: the work tree's own `.git` folder, found first, with
 * variables that cannot change that (callerGitIsInert). Null otherwise: asked alone, as before.
 */
async function layoutAlreadyAsked(repo: string): Promise<GitLayout | null> {
  const own = join(repo, '.git')
  if (!callerGitIsInert() || !isFolder(own)) return null
  const layout = await repositoryLayout(repo)
  return layout?.gitDir === own ? layout : null
}

/** A folder itself, not a link to one nor a `.git` file pointing elsewhere (a linked worktree's, a submodule's). */
function isFolder(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false
}

/** The base commit's tree id, verified once and then kept by commit id (an id names its content for good). */
async function verifiedTreeOf(git: RepoGit, commit: string, home: string, read: ObjectReader): Promise<string> {
  const file = join(home, 'cache', 'snapshot', 'commits', `${git.format}-${commit}`)
  const kept = existsSync(file) ? readFileSync(file, 'latin1') : ''
  if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(kept)) return kept
  const tree = await commitTreeOf(git, commit, `the base commit ${commit.slice(0, 12)}`, read)
  writeFileAtomic(file, tree, 0o600, { durable: false })
  return tree
}

/** A commit's tree id, from the verified commit object. */
export async function commitTreeOf(
  git: RepoGit,
  commit: string,
  what: string,
  read: ObjectReader = (ids, asked) => readVerified(git, ids, asked),
): Promise<string> {
  const object = (await read([commit], what)).get(commit)
  if (object?.type !== 'commit') fail('git_error', `${what} is not a commit in ${git.repo}`, { repo: git.repo, commit })
  return commitTree(object.content)
}

/**
 * A snapshot against `baseTree` (or the tree it gives, asked for once git lists the paths), its objects read by
 * `objects`: that and the hashing threads started early end with it.
 */
async function snapshotAgainst(
  git: RepoGit,
  baseTree: string | (() => Promise<string>),
  options: SnapshotOptions,
  objects: ObjectSession,
): Promise<RepoSnapshot> {
  const early: { threads: Threads | null } = { threads: null }
  try {
    return await snapshotWith(git, baseTree, options, early, objects.read)
  } finally {
    stopThreads(early.threads)
    objects.close()
  }
}

async function snapshotWith(
  git: RepoGit,
  base: string | (() => Promise<string>),
  options: SnapshotOptions,
  early: { threads: Threads | null },
  read: ObjectReader,
): Promise<RepoSnapshot> {
  const depth = options.depth ?? 0
  const store = objectStore(options.home, git.format)
  const indexFile = privateIndexPath(options.home, git)
  const idBytes = git.format === 'sha1' ? 20 : 32
  const startNs = BigInt(context().now()) * 1_000_000n
  const checksum = indexChecksum(indexFile, idBytes)
  // no private index: every file will be read, so the threads start now, while git lists the paths, and take the
  // index's paths as soon as git has listed them, while this thread reads the untracked ones and the base; each file
  // is compared with the id the index lists (a hint: a file that matches it but not the base is read again)
  if (!checksum && threadsLikelyUsed(fileSizeOr(join(git.gitDir, 'index'), 0))) early.threads = startThreads()
  const looking = checksum ? null : new Looking(git.repo, store, startNs, early.threads)
  let baseLoading: Promise<Manifest> | null = null
  const loadBase = () => {
    baseLoading ??= treeManifest(git, baseTree, options.home, `the base tree ${baseTree.slice(0, 12)}`, read)
    return baseLoading
  }
  let refused = false // a path take() refuses: none after it is handed over
  const handOver = (listed: IndexListing, from: number) => {
    const paths: PendingPath[] = []
    for (let i = from; i < listed.paths.length && !refused; i++) {
      const path = listed.paths[i]!
      refused = path.includes('\uFFFD')
      if (!refused) paths.push({ path, base: listed.hints[i] ?? null })
    }
    looking?.add(paths)
  }
  // asked first: the hashing threads wait for the index's paths, and git walks for untracked files while the rest is read
  const listing = listCommittable(git, looking ? handOver : undefined)
  listing.catch(() => {}) // a failure is met where it is awaited, below, not as an unhandled rejection meanwhile
  const baseTree = typeof base === 'string' ? base : await base()
  // an index git cannot read (damaged on disk) is no help: every file is read, and the index written anew
  const dirty = checksum ? await statDirty(git, indexFile).catch(() => null) : null
  const checked = dirty !== null && indexChecksum(indexFile, idBytes) === checksum // the index git checked is this one
  const last = depth === 0 && checked ? readLastSnapshot(indexFile) : null
  if (!last) void loadBase().catch(() => {}) // every path is looked at: the base is read while git lists them
  const listed = await listing
  const digest = listed.digest
  const done = (t: Taking, tree: string, submodules: SubmoduleSnapshot[] = []): RepoSnapshot => ({
    git,
    store,
    tree,
    baseTree,
    base: loadBase,
    changes: t.changes,
    kinds: t.kinds,
    submodules,
    skipped: t.skipped,
  })

  if (last && last.base_tree === baseTree && last.listing === digest && last.index === checksum) {
    const again = new Set([...dirty!, ...last.unindexed])
    const stored = last.changes.every(
      ({ after }) => !after || !/^100/.test(after.mode) || showable(store, after.oid, last.kinds[after.oid]),
    )
    if (again.size === 0 && stored) return done(fromLast(last), last.tree)
    const manifest = again.size <= REWRITE_AFTER && stored ? readManifest(options.home, last.tree) : null
    if (manifest) {
      // a few paths to look at again: the last snapshot's leaves for the rest (the private index is left as it is)
      const t = taking({ git, store, depth, base: await loadBase(), gitlinks: new Map(), startNs })
      const changes = fromLast(last)
      t.manifest = manifest
      t.kinds = changes.kinds
      t.changes = changes.changes.filter((change) => !again.has(change.path))
      for (const path of again) {
        manifest.delete(path)
        take(t, path)
        const before = t.base.get(path)
        if (before && !manifest.has(path)) t.changes.push({ path, before, after: null })
      }
      // the index is not written again, so each of these is looked at again next time too
      if (t.repositories.length === 0) return finish(t, [...again], checksum)
    }
  }

  const t = taking({ git, store, depth, base: await loadBase(), gitlinks: new Map(), startNs })
  t.known = dirty === null ? null : readPrivateIndex(indexFile, git.format)
  t.knownKinds = t.known ? readKinds(indexFile) : {}
  t.dirty = dirty ?? new Set()
  const { paths, gitlinks } = listed.cached()
  t.gitlinks = gitlinks
  t.pending = [] // the files to read are hashed together, on several threads when there are many bytes
  t.threads = early.threads
  t.looking = looking
  for (const path of paths) take(t, path)
  for (const path of listed.others()) take(t, path) // never in the index: never listed twice
  await takePending(t)
  const submodules: SubmoduleSnapshot[] = []
  const unrecorded = t.repositories.filter((repo) => repo.before?.mode !== '160000').map((repo) => repo.path)
  const moved = await movedSubmodules(unrecorded, t.base, t.manifest, git, store)
  for (const { path, full, before } of t.repositories) {
    const sub = await submodule(path, full, before, depth, moved.get(path) ?? null)
    if (!sub) continue
    submodules.push(sub)
    const leaf: Leaf = sub.folded ? { mode: '40000', oid: sub.snapshot.tree } : { mode: '160000', oid: sub.head! }
    record(t, path, before, leaf)
  }
  for (const [path, leaf] of t.base) if (!t.manifest.has(path)) t.changes.push({ path, before: leaf, after: null })
  // rewritten once enough files were hashed again (the few left out are hashed again next time, which is cheap)
  let written = checksum
  if (t.known === null || t.rehashed > REWRITE_AFTER) {
    written = writePrivateIndex(indexFile, t.nextIndex, git.format)
    writeKinds(indexFile, t.nextKinds)
  }
  const onDisk = written === checksum && t.known ? t.known : t.nextIndex
  const unindexed = [...t.manifest.keys(), ...t.skipped.map((s) => s.path)].filter((path) => !onDisk.has(path))
  return finish(t, unindexed, written, submodules, gitlinks.size > 0 || t.repositories.length > 0)

  /** The snapshot's tree and record: kept for next time unless it holds repositories (those are always walked). */
  function finish(
    t: Taking,
    unindexed: string[],
    index: string,
    submodules: SubmoduleSnapshot[] = [],
    nested = false,
  ): RepoSnapshot {
    t.changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    const folders = reusableFolders(t.base)
    const fromBase = folders && { folders, changed: t.changes.map((change) => change.path) }
    const tree = manifestTree(t.manifest, git.format, undefined, fromBase)
    if (depth === 0) {
      keepManifest(options.home, tree, t.manifest)
      if (!nested) writeLastSnapshot(indexFile, lastOf(t, tree, index, [...new Set(unindexed)]))
    }
    return done(t, tree, submodules)
  }

  function lastOf(t: Taking, tree: string, index: string, unindexed: string[]): LastSnapshot {
    const kinds: LastSnapshot['kinds'] = {}
    for (const { after } of t.changes) if (after && t.kinds.has(after.oid)) kinds[after.oid] = t.kinds.get(after.oid)!
    return {
      version: 1,
      base_tree: baseTree,
      listing: digest,
      index,
      tree,
      changes: t.changes,
      kinds,
      skipped: t.skipped,
      unindexed,
    }
  }

  /** The last snapshot's changes and kinds, as a snapshot taken now would have them. */
  function fromLast(last: LastSnapshot): Taking {
    const t = taking({ git, store, depth, base: new Map(), gitlinks: new Map(), startNs })
    t.changes = last.changes.map((change) => ({ ...change }))
    t.kinds = new Map(Object.entries(last.kinds))
    t.skipped = last.skipped
    return t
  }

  async function submodule(
    path: string,
    full: string,
    before: Leaf | null,
    at: number,
    movedFrom: MovedFrom | null,
  ): Promise<SubmoduleSnapshot | null> {
    if (at >= SUBMODULE_DEPTH) return null
    const inner = await repoGit(full)
    const head =
      (
        await plainGitTry(full, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { env: cleanGitEnv() })
      ).stdout.trim() || null
    const recorded = before?.mode === '160000' ? before.oid : (movedFrom?.leaf.oid ?? null)
    const where = movedFrom ? ` (at ${movedFrom.path} in the base, moved by the change)` : ''
    const objects = objectSession(inner)
    let against: string
    let headTree: string | null
    try {
      headTree = head
        ? await commitTreeOf(inner, head, `the submodule ${path}'s commit ${head.slice(0, 12)}`, objects.read)
        : null
      // shown against what the base records, here or where the change moved it from (one that cannot be read is
      // git_error naming it, never an empty diff), or, added by the change, as wholly new: its files are shown, never
      // its HEAD against itself
      against = recorded
        ? await commitTreeOf(
            inner,
            recorded,
            `the submodule ${path}'s recorded commit ${recorded.slice(0, 12)}${where}`,
            objects.read,
          )
        : emptyTreeId(inner.format)
    } catch (error) {
      objects.close()
      throw error
    }
    const snapshot = await snapshotAgainst(inner, against, { ...options, depth: at + 1 }, objects)
    return { path, recorded, moved_from: movedFrom?.path ?? null, head, folded: snapshot.tree !== headTree, snapshot }
  }
}

/** Hashed files past which the private index is written again. */
const REWRITE_AFTER = 20

export const emptyTreeId = (format: ObjectFormat) => objectId(format, 'tree', Buffer.alloc(0))

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
