// The reviewer's own copy of a snapshot: its files written from pair-loop's object store (the change's blobs as the
// snapshot read them) and the repository's verified objects (the base's unchanged ones) into a folder under the run's
// artifacts, then made read-only. The reviewer reads this, never the live working tree the coder writes meanwhile.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { writeFileAtomic } from '../ground/fsutil.ts'
import type { Manifest } from './manifest.ts'
import type { RepoSnapshot } from './snapshot.ts'
import { eachStoredBlob, hasObject, type ObjectStore, storeGit } from './store.ts'
import { objectSizes, readVerified, type RepoGit } from './verified.ts'

/**
 * What the copy holds at most, in bytes: the changed files first, then the rest by path; past it, files are left out
 * and named (the diff still shows the change). Writing a big tree's every file would hold up each new review.
 */
export const COPY_MAX_BYTES = 64 * 1024 * 1024
/** Bytes read from the repository per git call: memory stays bounded whatever the tree holds. */
const BATCH_BYTES = 32 * 1024 * 1024

export interface ReviewerCopy {
  dir: string
  /** The snapshot's tree id the copy holds. */
  tree: string
  /** The file names left out wherever they are (a reviewer CLI would load them as instructions), lower-cased. */
  hidden?: string[]
  files: number
  bytes: number
  /** Paths of the snapshot not in the copy, and why (a link, past the cap, a submodule not checked out…). */
  left_out: { path: string; why: string }[]
}

interface Wanted {
  path: string
  oid: string
  mode: string
  source: 'store' | RepoGit
  size: number
}

/**
 * The snapshot written to `dir` (kept when it already holds this tree), read-only, within `maxBytes`, without the
 * files named `hidden` in any folder (compared without case: a case-blind file system finds GEMINI.md as gemini.md).
 */
export async function writeReviewerCopy(
  snap: RepoSnapshot,
  dir: string,
  maxBytes = COPY_MAX_BYTES,
  hidden: readonly string[] = [],
): Promise<ReviewerCopy> {
  const record = `${dir}.json`
  const kept = readRecord(record)
  const names = [...new Set(hidden.map((name) => name.toLowerCase()))].sort()
  if (
    kept?.tree === snap.tree &&
    kept.dir === dir &&
    (kept.hidden ?? []).join('\0') === names.join('\0') &&
    lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()
  )
    return kept
  removeCopy(dir)
  rmSync(record, { force: true })
  const left_out: ReviewerCopy['left_out'] = []
  const leaves: Omit<Wanted, 'size'>[] = []
  await collect(snap, '', leaves, left_out)
  leaveOut(leaves, left_out, new Set(names))
  const wanted = await sized(snap.store, leaves, left_out)
  const changed = new Set(changedPaths(snap, ''))
  wanted.sort((a, b) => Number(changed.has(b.path)) - Number(changed.has(a.path))) // stable: by path within each
  let bytes = 0
  const within: Wanted[] = []
  for (const file of wanted) {
    if (bytes + file.size > maxBytes) {
      left_out.push({ path: file.path, why: `past the copy's cap of ${maxBytes} bytes` })
      continue
    }
    bytes += file.size
    within.push(file)
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  await writeAll(snap.store, dir, within)
  readOnly(dir)
  left_out.sort((a, b) => (a.path < b.path ? -1 : 1))
  const copy = {
    dir,
    tree: snap.tree,
    ...(names.length ? { hidden: names } : {}),
    files: within.length,
    bytes,
    left_out,
  }
  writeFileAtomic(record, JSON.stringify(copy), 0o600, { durable: false })
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
        source: hasObject(snap.store, leaf.oid) ? 'store' : snap.git,
      })
  }
}

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

/** The paths the change touches, submodules' too, from the top. */
function changedPaths(snap: RepoSnapshot, prefix: string): string[] {
  const subs = snap.submodules.flatMap((sub) => changedPaths(sub.snapshot, `${prefix}${sub.path}/`))
  return [...snap.changes.map((change) => `${prefix}${change.path}`), ...subs]
}

/** A relative path of plain names: nothing that climbs out of the copy or names it. */
const safePath = (path: string) => path.split('/').every((part) => part !== '' && part !== '.' && part !== '..')

/** Each leaf's size, asked of where its bytes are; one whose bytes are nowhere (over 16 MiB, not kept) is left out. */
async function sized(
  store: ObjectStore,
  leaves: Omit<Wanted, 'size'>[],
  left_out: ReviewerCopy['left_out'],
): Promise<Wanted[]> {
  const sizes = new Map<string, number>()
  const fromStore = [...new Set(leaves.filter((leaf) => leaf.source === 'store').map((leaf) => leaf.oid))]
  if (fromStore.length) {
    const chunks: Buffer[] = []
    const input = `${fromStore.join('\n')}\n`
    await storeGit(store, ['cat-file', '--batch-check'], (chunk) => chunks.push(chunk) > 0, 120_000, input)
    const text = Buffer.concat(chunks).toString('latin1')
    for (const line of text.split('\n')) {
      const match = /^([0-9a-f]+) blob (\d+)$/.exec(line)
      if (match) sizes.set(match[1]!, Number(match[2]))
    }
  }
  const byRepo = new Map<RepoGit, string[]>()
  for (const leaf of leaves)
    if (leaf.source !== 'store') byRepo.set(leaf.source, [...(byRepo.get(leaf.source) ?? []), leaf.oid])
  for (const [git, ids] of byRepo)
    for (const [oid, size] of await objectSizes(git, [...new Set(ids)])) sizes.set(oid, size)
  const wanted: Wanted[] = []
  for (const leaf of leaves) {
    const size = sizes.get(leaf.oid)
    if (size === undefined) left_out.push({ path: leaf.path, why: 'its bytes were not kept (over 16 MiB)' })
    else wanted.push({ ...leaf, size })
  }
  return wanted.sort((a, b) => (a.path < b.path ? -1 : 1))
}

/** Every file written, a blob at a time from the store and a bounded batch at a time from each repository. */
async function writeAll(store: ObjectStore, dir: string, files: Wanted[]): Promise<void> {
  const byOid = new Map<string, Wanted[]>()
  for (const file of files) byOid.set(file.oid, [...(byOid.get(file.oid) ?? []), file])
  const write = (oid: string, content: Buffer) => {
    const at = byOid.get(oid) ?? []
    byOid.delete(oid) // written once, to every path it is at, whichever batch asks for it again
    for (const file of at) {
      const path = join(dir, file.path)
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
      writeFileSync(path, content, { mode: file.mode === '100755' ? 0o555 : 0o444, flag: 'wx' })
    }
  }
  const stored = [...new Set(files.filter((file) => file.source === 'store').map((file) => file.oid))]
  await eachStoredBlob(store, stored, write)
  let batch: Wanted[] = []
  let batchBytes = 0
  const flush = async () => {
    const git = batch[0]?.source
    if (!git || git === 'store') return
    const read = await readVerified(git, [...new Set(batch.map((file) => file.oid))], 'a file of the reviewed snapshot')
    for (const [oid, object] of read) write(oid, object.content)
    batch = []
    batchBytes = 0
  }
  for (const file of files.filter((f) => f.source !== 'store')) {
    if (batch.length && (batch[0]!.source !== file.source || batchBytes + file.size > BATCH_BYTES)) await flush()
    batch.push(file)
    batchBytes += file.size
  }
  await flush()
}

/** Every folder of the copy made read-only, deepest first (its files were written read-only). */
function readOnly(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) readOnly(join(dir, entry.name))
  chmodSync(dir, 0o555)
}

/** A copy removed: its folders made writable again first (rm cannot unlink from a read-only folder). */
export function removeCopy(dir: string): void {
  const writable = (at: string) => {
    if (!lstatSync(at, { throwIfNoEntry: false })?.isDirectory()) return
    chmodSync(at, 0o700)
    for (const entry of readdirSync(at, { withFileTypes: true }))
      if (entry.isDirectory()) writable(join(at, entry.name))
  }
  writable(dir)
  rmSync(dir, { recursive: true, force: true })
}

function readRecord(file: string): ReviewerCopy | null {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as ReviewerCopy
    return typeof value?.tree === 'string' && Array.isArray(value.left_out) ? value : null
  } catch {
    return null
  }
}
