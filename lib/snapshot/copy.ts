// The reviewer's own copy of a snapshot: its files written from pair-loop's object store (the change's blobs as the
// snapshot read them) and the repository's verified objects (the base's unchanged ones) into a folder under the run's
// artifacts, then made read-only. The reviewer reads this, never the live working tree the coder writes meanwhile.
// Written once per run in full; a later round writes only the files that differ from the last copy (copy-files.ts).
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { basename } from 'node:path'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { placeFiles, removeCopy, type Wanted, type Written } from './copy-files.ts'
import type { Manifest } from './manifest.ts'
import { EXCLUDED_BY_CONFIG } from './named-only.ts'
import { globMatcher } from '../ground/glob.ts'
import type { RepoSnapshot } from './snapshot.ts'
import { hasObject, type ObjectStore, storedSizes } from './store.ts'
import { objectSizes, type RepoGit } from './verified.ts'

/**
 * What the copy holds at most, in bytes: the changed files first, then the rest by path; past it, files are left out
 * and named (the diff still shows the change). Writing a big tree's every file would hold up each new review.
 */
export const COPY_MAX_BYTES = 64 * 1024 * 1024

export interface ReviewerCopy {
  dir: string
  /** The snapshot's tree id the copy holds. */
  tree: string
  /** The file names left out wherever they are (a reviewer CLI would load them as instructions), lower-cased. */
  hidden?: string[]
  /** The person's globs (`pair_loop.review_exclude`) whose paths are left out: excluded by config, not reviewed. */
  excluded?: string[]
  files: number
  bytes: number
  /** Paths of the snapshot not in the copy, and why (a link, past the cap, a submodule not checked out…). */
  left_out: { path: string; why: string }[]
}

/**
 * The snapshot written to `dir` (kept when it already holds this tree), read-only, within `maxBytes`, without the
 * files named `hidden` in any folder (compared without case: a case-blind file system finds GEMINI.md as gemini.md)
 * and without the paths `exclude` matches (the person's globs: the reviewer is not shown them).
 */
export async function writeReviewerCopy(
  snap: RepoSnapshot,
  dir: string,
  maxBytes = COPY_MAX_BYTES,
  hidden: readonly string[] = [],
  exclude: readonly string[] = [],
): Promise<ReviewerCopy> {
  const record = `${dir}.json`
  const kept = readRecord(record)
  const names = [...new Set(hidden.map((name) => name.toLowerCase()))].sort()
  const globs = [...exclude]
  const same = (a: string[] | undefined, b: string[]) => (a ?? []).join('\0') === b.join('\0')
  // a copy made with other names hidden is written again whole: a file it left out may be due now, or the reverse
  const there =
    kept?.dir === dir &&
    same(kept.hidden, names) &&
    same(kept.excluded, globs) &&
    lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()
  const hiding = { ...hiddenOf(names), ...(globs.length ? { excluded: globs } : {}) }
  if (there && kept?.tree === snap.tree)
    return { dir, tree: kept.tree, ...hiding, files: kept.files, bytes: kept.bytes, left_out: kept.left_out }
  rmSync(record, { force: true }) // first: a copy half written is never taken for a whole one
  const left_out: ReviewerCopy['left_out'] = []
  const leaves: Omit<Wanted, 'size'>[] = []
  await collect(snap, '', leaves, left_out)
  leaveOut(leaves, left_out, new Set(names))
  leaveOutExcluded(leaves, left_out, globMatcher(globs))
  const known = new Map(Object.entries(there ? (kept?.sizes ?? {}) : {})) // the last copy's: asked again only if new
  const changed = new Set(changedPaths(snap, ''))
  const ordered = leaves.sort((a, b) => (a.path < b.path ? -1 : 1))
  ordered.sort((a, b) => Number(changed.has(b.path)) - Number(changed.has(a.path))) // stable: by path within each
  const { within, bytes, sizes } = await fill(snap.store, ordered, known, maxBytes, left_out)
  // the run's last copy, where it is whole: only the files that differ from it are written
  const written = await placeFiles(snap.store, dir, within, there ? (kept?.written ?? null) : null)
  left_out.sort((a, b) => (a.path < b.path ? -1 : 1))
  const copy = { dir, tree: snap.tree, ...hiding, files: within.length, bytes, left_out }
  writeFileAtomic(record, JSON.stringify({ ...copy, written, sizes: Object.fromEntries(sizes) }), 0o600, {
    durable: false,
  })
  return copy
}

/** The snapshot's leaves as files, each with where its bytes are; submodules' files under their path. */
async function collect(
  snap: RepoSnapshot,
  prefix: string,
  leaves: Omit<Wanted, 'size'>[],
  left_out: ReviewerCopy['left_out'],
): Promise<void> {
  const manifest: Manifest = new Map(await snap.base())
  for (const change of snap.changes)
    if (change.after) manifest.set(change.path, change.after)
    else manifest.delete(change.path)
  const subs = new Map(snap.submodules.map((sub) => [sub.path, sub]))
  // only a changed file's blob is in the store for sure (a base one may be, from another snapshot): looked for there
  const changed = new Set(snap.changes.flatMap((change) => (change.after ? [change.path] : [])))
  for (const [path, leaf] of manifest) {
    const label = `${prefix}${path}`
    const sub = subs.get(path)
    if (sub && (leaf.mode === '160000' || leaf.mode === '40000'))
      await collect(sub.snapshot, `${label}/`, leaves, left_out)
    else if (leaf.mode === '160000' || leaf.mode === '40000')
      left_out.push({ path: label, why: 'a submodule that is not checked out' })
    else if (leaf.mode === '120000') left_out.push({ path: label, why: 'a symbolic link (its target is in the diff)' })
    else if (!safePath(label)) left_out.push({ path: label, why: 'a name no folder can hold' })
    else
      leaves.push({
        path: label,
        oid: leaf.oid,
        mode: leaf.mode,
        source: changed.has(path) && hasObject(snap.store, leaf.oid) ? 'store' : snap.git,
      })
  }
}

const hiddenOf = (names: string[]) => (names.length ? { hidden: names } : {})

/** The leaves named as one of `hidden` taken out, each named in `left_out`. */
function leaveOut(leaves: Omit<Wanted, 'size'>[], left_out: ReviewerCopy['left_out'], hidden: Set<string>): void {
  if (!hidden.size) return
  let at = 0
  for (const leaf of leaves) {
    if (hidden.has(basename(leaf.path).toLowerCase()))
      left_out.push({ path: leaf.path, why: 'instructions its CLI would load (their change, if any, is in the diff)' })
    else leaves[at++] = leaf
  }
  leaves.length = at
}

/** The leaves the person's globs match taken out, each named in `left_out` as excluded by config. */
function leaveOutExcluded(
  leaves: Omit<Wanted, 'size'>[],
  left_out: ReviewerCopy['left_out'],
  excluded: (path: string) => boolean,
): void {
  let at = 0
  for (const leaf of leaves) {
    if (excluded(leaf.path)) left_out.push({ path: leaf.path, why: EXCLUDED_BY_CONFIG })
    else leaves[at++] = leaf
  }
  leaves.length = at
}

/** The paths the change touches, submodules' too, from the top. */
function changedPaths(snap: RepoSnapshot, prefix: string): string[] {
  const subs = snap.submodules.flatMap((sub) => changedPaths(sub.snapshot, `${prefix}${sub.path}/`))
  return [...snap.changes.map((change) => `${prefix}${change.path}`), ...subs]
}

/** A relative path of plain names: nothing that climbs out of the copy or names it. */
const safePath = (path: string) => path.split('/').every((part) => part !== '' && part !== '.' && part !== '..')

/** Leaves sized per git call while the copy fills: a big tree's every size is never asked once the copy is full. */
const SIZE_CHUNK = 2000

/**
 * The leaves that fit within `maxBytes`, taken in order, and the sizes asked (`known` ones not asked again). A leaf
 * too big for the room left is passed over for the next; once less than a hundredth of the cap is left, the rest are
 * left out unsized. One whose bytes are nowhere (over 16 MiB, not kept) is left out.
 */
async function fill(
  store: ObjectStore,
  ordered: Omit<Wanted, 'size'>[],
  known: Map<string, number>,
  maxBytes: number,
  left_out: ReviewerCopy['left_out'],
): Promise<{ within: Wanted[]; bytes: number; sizes: Map<string, number> }> {
  const within: Wanted[] = []
  const sizes = new Map<string, number>()
  let bytes = 0
  const past = (leaf: Omit<Wanted, 'size'>) =>
    left_out.push({ path: leaf.path, why: `past the copy's cap of ${maxBytes} bytes` })
  for (let at = 0; at < ordered.length; at += SIZE_CHUNK) {
    const chunk = ordered.slice(at, at + SIZE_CHUNK)
    if (maxBytes - bytes < maxBytes / 100) {
      for (const leaf of ordered.slice(at)) past(leaf)
      break
    }
    for (const [oid, size] of await sizesOf(store, chunk, known)) sizes.set(oid, size)
    for (const leaf of chunk) {
      const size = sizes.get(leaf.oid)
      if (size === undefined) left_out.push({ path: leaf.path, why: 'its bytes were not kept (over 16 MiB)' })
      else if (bytes + size > maxBytes) past(leaf)
      else {
        bytes += size
        within.push({ ...leaf, size })
      }
    }
  }
  return { within, bytes, sizes }
}

/** Each leaf's size, from `known` or asked of where its bytes are (absent: nowhere). */
async function sizesOf(
  store: ObjectStore,
  leaves: Omit<Wanted, 'size'>[],
  known: Map<string, number>,
): Promise<Map<string, number>> {
  const unknown = leaves.filter((leaf) => !known.has(leaf.oid))
  const sizes = await storedSizes(
    store,
    unknown.filter((leaf) => leaf.source === 'store').map((leaf) => leaf.oid),
  )
  for (const leaf of leaves) if (known.has(leaf.oid)) sizes.set(leaf.oid, known.get(leaf.oid)!)
  const byRepo = new Map<RepoGit, string[]>()
  for (const leaf of unknown)
    if (leaf.source !== 'store') byRepo.get(leaf.source)?.push(leaf.oid) ?? byRepo.set(leaf.source, [leaf.oid])
  for (const [git, ids] of byRepo) for (const [oid, size] of await objectSizes(git, ids)) sizes.set(oid, size)
  return sizes
}

/**
 * An empty read-only copy at `dir`, for a review of bytes no snapshot here holds (the final round's PR diff when the
 * working tree is not the approved tree): the reviewer's flags still name it, and it holds nothing stale or live.
 */
export function emptyReviewerCopy(dir: string): ReviewerCopy {
  removeCopy(dir)
  rmSync(`${dir}.json`, { force: true })
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o555)
  return { dir, tree: '', files: 0, bytes: 0, left_out: [] }
}

/**
 * The record beside a copy: the copy, what each of its files was when written (copy-files.ts), and the size of each
 * blob of its tree (the next copy asks git only for the new ones: 30k sizes from loose objects took seconds).
 */
type CopyRecord = ReviewerCopy & { written?: Written; sizes?: Record<string, number> }

function readRecord(file: string): CopyRecord | null {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as CopyRecord
    return typeof value?.tree === 'string' && Array.isArray(value.left_out) ? value : null
  } catch {
    return null
  }
}
