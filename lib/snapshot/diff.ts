// The reviewer's view of a snapshot: every changed path named, and the diff of the text ones, computed by git from
// pair-loop's own object store — the base's blobs copied there once verified, the change's blobs as the snapshot read
// them. What the reviewer is shown and what the snapshot's tree id records are the same bytes.
import type { DiffStat } from '../run/state.ts'
import { Capped } from '../ground/capped.ts'
import { type BlobKind, blobKind, WHOLE_FILE_LIMIT } from './files.ts'
import { type Leaf, type Manifest, manifestTree } from './manifest.ts'
import { EXCLUDED_BY_CONFIG, type NamedOnly } from './named-only.ts'
import { globMatcher } from '../ground/glob.ts'
import type { RepoSnapshot } from './snapshot.ts'
import type { Change } from './take.ts'
import { eachStoredBlob, hasObject, showable, storedSizes, storeGit, writeObject } from './store.ts'
import { objectSizes, readVerified } from './verified.ts'

/** One changed path as the reviewer sees it, from the top repository. */
interface Item {
  label: string
  change: Change
  /** The snapshot it is in (the top one, or a submodule's): where its blobs' sizes are asked. */
  snap: RepoSnapshot
  /** Why it is named only (null: its diff is shown). */
  unreviewed: string | null
}

export interface SnapshotDiff {
  /** Every changed path, one a line: its counts, or why it is named only. */
  stat: string
  diff: string
  /** The diff's size in bytes; when truncated, a lower bound (git is stopped past the cap). */
  bytes: number
  truncated: boolean
  counts: DiffStat
  /** Paths named only, with why, their ids in the snapshot and their sizes in bytes (null: not a blob, or unknown). */
  unreviewed: NamedOnly[]
  /** The tree of the files shown, written to pair-loop's store: a later round's delta starts from it. */
  shownTree: string
}

/**
 * The diff shown to the reviewer, capped at `maxBytes` (0: no diff body, the stat alone); a path matching one of
 * `exclude` (the person's `pair_loop.review_exclude`) is named only, as excluded by config, never shown.
 */
export async function snapshotDiff(
  snap: RepoSnapshot,
  maxBytes: number,
  exclude: readonly string[] = [],
): Promise<SnapshotDiff> {
  const notes: string[] = []
  const items = await collectItems(snap, '', notes)
  const excluded = globMatcher(exclude)
  for (const item of items) if (excluded(item.label)) item.unreviewed = EXCLUDED_BY_CONFIG
  const shown = items.filter((item) => item.unreviewed === null)
  const before: Manifest = new Map()
  const after: Manifest = new Map()
  for (const { label, change } of shown) {
    if (change.before) before.set(label, change.before)
    if (change.after) after.set(label, change.after)
  }
  const write = (content: Buffer) => void writeObject(snap.store, 'tree', content)
  const [oldTree, newTree] = [manifestTree(before, snap.git.format, write), manifestTree(after, snap.git.format, write)]
  const patch = new Capped(Math.max(maxBytes, 0))
  const shownStat = shown.length
    ? await statAndPatch(snap, oldTree, newTree, maxBytes > 0 ? patch : null)
    : { lines: [], summary: '', files: 0, insertions: 0, deletions: 0 }

  const namedItems = items.filter((item) => item.unreviewed)
  const sizes = await sizesOf(namedItems)
  const named = namedItems.map(
    ({ label, change, unreviewed }) =>
      ` ${label} | ${verbOf(change)}, ${unreviewed}: NOT REVIEWED (${idOf(change, sizes)})`,
  )
  // a rename is one file, as git counts it
  const counts = {
    files: shownStat.files + named.length,
    insertions: shownStat.insertions,
    deletions: shownStat.deletions,
  }
  const unreviewed = namedItems.map((item) => {
    const leaf = item.change.after ?? item.change.before
    return { path: item.label, why: item.unreviewed!, oid: leaf?.oid ?? null, size: sizeOf(leaf, sizes) }
  })
  const tail =
    named.length || notes.length ? [`Named only (${named.length}), not shown below:`, ...named, ...notes] : []
  const text = [...shownStat.lines, ...(shownStat.summary ? [shownStat.summary] : []), ...tail].join('\n')
  return {
    stat: text,
    diff: patch.text(),
    bytes: patch.bytes,
    truncated: patch.truncated,
    counts,
    unreviewed,
    shownTree: newTree,
  }
}

/**
 * The change from `fromTree` (the files a review was shown, its `shownTree`) to `toTree` (this review's), capped like
 * the whole diff: null when that tree is no longer in pair-loop's store (pruned), so the prompt gives the whole change.
 */
export async function snapshotDelta(
  snap: RepoSnapshot,
  fromTree: string,
  toTree: string,
  maxBytes: number,
): Promise<{ stat: string; diff: string; truncated: boolean; reverted: string[] } | null> {
  if (fromTree === toTree) return { stat: '', diff: '', truncated: false, reverted: [] }
  const patch = new Capped(Math.max(maxBytes, 0))
  try {
    const stat = await statAndPatch(snap, fromTree, toTree, maxBytes > 0 ? patch : null)
    const text = [...stat.lines, ...(stat.summary ? [stat.summary] : [])].join('\n')
    return {
      stat: text,
      diff: patch.text(),
      truncated: patch.truncated,
      reverted: await reverted(snap, fromTree, toTree),
    }
  } catch {
    return null
  }
}

/**
 * The paths the delta shows deleted that the change no longer touches: put back as the base has them (the trees
 * compared hold the changed files only, so a file reverted to the base drops out of them as if deleted).
 */
async function reverted(snap: RepoSnapshot, fromTree: string, toTree: string): Promise<string[]> {
  const out: Buffer[] = []
  await storeGit(
    snap.store,
    ['diff-tree', '-r', '-z', '--name-only', '--diff-filter=D', fromTree, toTree],
    (chunk) => out.push(chunk) > 0,
  )
  const touched = new Set(snap.changes.map((change) => change.path))
  const inSubmodule = (path: string) => snap.submodules.some((sub) => path.startsWith(`${sub.path}/`))
  return Buffer.concat(out)
    .toString('utf8')
    .split('\0')
    .filter((path) => path && !touched.has(path) && !inSubmodule(path))
}

const verbOf = (change: Change) =>
  !change.before
    ? 'added'
    : !change.after
      ? 'deleted'
      : change.before.oid === change.after.oid
        ? 'mode changed'
        : 'modified'

/** Each side's blob id (the old one short) and its size in bytes, where it has one. */
const idOf = (change: Change, sizes: Map<string, number>) => {
  const side = (word: string, leaf: Leaf, oid: string) => {
    const size = sizeOf(leaf, sizes)
    return `${word} ${oid}${size === null ? '' : `, ${size} bytes`}`
  }
  return [
    change.before && side('was', change.before, change.before.oid.slice(0, 12)),
    change.after && side('now', change.after, change.after.oid),
  ]
    .filter(Boolean)
    .join('; ')
}

/** A blob's size (a file's or a link's), never a repository's commit or tree. */
const sizeOf = (leaf: Leaf | null, sizes: Map<string, number>) =>
  leaf && /^1[02]0/.test(leaf.mode) ? (sizes.get(leaf.oid) ?? null) : null

/**
 * The sizes of the named-only paths' blobs, both sides: from pair-loop's store (a binary's bytes are kept there, a
 * blob too big to keep has its size noted), else from the repository (a base blob too big to copy).
 */
async function sizesOf(items: Item[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  const bySnap = new Map<RepoSnapshot, string[]>()
  for (const { snap, change } of items)
    for (const leaf of [change.before, change.after])
      if (leaf && /^1[02]0/.test(leaf.mode)) bySnap.set(snap, [...(bySnap.get(snap) ?? []), leaf.oid])
  for (const [snap, oids] of bySnap) {
    const found = await storedSizes(snap.store, oids)
    const rest = oids.filter((oid) => !found.has(oid))
    if (rest.length) for (const [oid, size] of await objectSizes(snap.git, rest)) found.set(oid, size)
    for (const [oid, size] of found) sizes.set(oid, size)
  }
  return sizes
}

/** The changed paths of the snapshot and of its submodules, each with whether its diff can be shown. */
async function collectItems(snap: RepoSnapshot, prefix: string, notes: string[]): Promise<Item[]> {
  const items: Item[] = []
  const subs = new Map(snap.submodules.map((sub) => [sub.path, sub]))
  const movedTo = new Map(snap.submodules.flatMap((sub) => (sub.moved_from ? [[sub.moved_from, sub.path]] : [])))
  const oldKinds = await baseKinds(snap)
  for (const skipped of snap.skipped)
    notes.push(` ${prefix}${skipped.path} | ${skipped.what}: left out of the snapshot, NOT REVIEWED`)
  for (const change of snap.changes) {
    const label = `${prefix}${change.path}`
    const isRepo = (leaf: Leaf | null) => leaf?.mode === '160000' || (leaf?.mode === '40000' && subs.has(change.path))
    if (isRepo(change.before) || isRepo(change.after)) {
      const sub = subs.get(change.path)
      const to = change.after ? undefined : movedTo.get(change.path)
      if (to !== undefined) {
        notes.push(` ${label} | submodule moved to ${prefix}${to}: its files are shown there`)
        continue
      }
      if (!sub) {
        items.push({ label, change, snap, unreviewed: 'a submodule that is not checked out' })
        continue
      }
      const at = sub.moved_from ? ` at ${prefix}${sub.moved_from} (moved)` : ''
      const from = sub.recorded ? `its recorded commit ${sub.recorded.slice(0, 12)}${at}` : 'nothing (new since base)'
      const now = sub.folded
        ? 'its work tree, with changes not committed inside it (a PR cannot ship them)'
        : `commit ${sub.head}`
      notes.push(` ${label} | submodule: ${from} → ${now}; its files are listed with this prefix`)
      items.push(...(await collectItems(sub.snapshot, `${label}/`, notes)))
      continue
    }
    items.push({ label, change, snap, unreviewed: whyUnreviewed(snap, change, oldKinds) })
  }
  return items
}

function whyUnreviewed(snap: RepoSnapshot, change: Change, oldKinds: Map<string, BlobKind | 'missing'>): string | null {
  const afterKind = (leaf: Leaf) => {
    const kind = snap.kinds.get(leaf.oid)
    return showable(snap.store, leaf.oid, kind) ? kind : 'missing'
  }
  const sides: [Leaf | null, BlobKind | 'missing' | undefined][] = [
    [change.before, change.before ? oldKinds.get(change.before.oid) : undefined],
    [change.after, change.after ? afterKind(change.after) : undefined],
  ]
  for (const [leaf, kind] of sides) {
    if (!leaf || leaf.mode === '120000') continue
    if (leaf.mode === '160000' || leaf.mode === '40000') return 'a repository of its own'
    if (kind === 'binary') return 'binary'
    if (kind === 'big') return `over ${WHOLE_FILE_LIMIT / 1024 / 1024} MiB`
    if (kind === 'missing' || kind === undefined) return 'its bytes could not be kept'
  }
  return null
}

/** The base side's blobs of the changed files: sized, read verified and copied into the store (all but big ones). */
async function baseKinds(snap: RepoSnapshot): Promise<Map<string, BlobKind | 'missing'>> {
  const kinds = new Map<string, BlobKind | 'missing'>()
  const blobs = snap.changes
    .filter((change) => change.before && /^100/.test(change.before.mode))
    .map((change) => change.before!)
  const need = blobs.filter((leaf) => !hasObject(snap.store, leaf.oid))
  const sizes = await objectSizes(
    snap.git,
    need.map((leaf) => leaf.oid),
  )
  const small = need.filter((leaf) => (sizes.get(leaf.oid) ?? 0) <= WHOLE_FILE_LIMIT && sizes.has(leaf.oid))
  const read = await readVerified(
    snap.git,
    small.map((leaf) => leaf.oid),
    'a file at base',
  )
  for (const leaf of need) {
    const object = read.get(leaf.oid)
    if (object) writeObject(snap.store, 'blob', object.content)
    else kinds.set(leaf.oid, sizes.has(leaf.oid) ? 'big' : 'missing')
  }
  // the rest are in the store already (read on an earlier snapshot): their kinds from it, in one git call
  const stored = new Map<string, string>() // id → the first path it is at
  for (const change of snap.changes) {
    const leaf = change.before
    if (!leaf || !/^100/.test(leaf.mode) || kinds.has(leaf.oid)) continue
    const object = read.get(leaf.oid)
    const known = snap.kinds.get(leaf.oid)
    if (object) kinds.set(leaf.oid, blobKind(object.content))
    else if (known) kinds.set(leaf.oid, known)
    else if (!stored.has(leaf.oid)) stored.set(leaf.oid, change.path)
  }
  await eachStoredBlob(snap.store, [...stored.keys()], (oid, content) => kinds.set(oid, blobKind(content)))
  return kinds
}

const DIFF_FLAGS = ['-r', '-M', '--text', '--no-color', '--no-ext-diff', '--no-textconv']

/**
 * git's own --stat of the shown files (every one listed) and the totals of its summary line, and with `patch` the patch
 * after it, from one git call (a process fewer to start, on this thread alone at the end of a snapshot): the stat ends
 * at the first empty line (a name holding a newline is quoted), and the patch follows it.
 */
async function statAndPatch(snap: RepoSnapshot, oldTree: string, newTree: string, patch: Capped | null) {
  const stat: Buffer[] = []
  const toPatch = (chunk: Buffer) => !patch || patch.push(chunk.includes(0) ? escapeNuls(chunk) : chunk)
  const onData = statThenPatch((chunk) => void stat.push(chunk), toPatch)
  const args = ['diff-tree', ...DIFF_FLAGS, '--stat=200', ...(patch ? PATCH_FLAGS : []), oldTree, newTree]
  await storeGit(snap.store, args, onData)
  const lines = Buffer.concat(stat).toString('utf8').trimEnd().split('\n')
  const summary = lines.pop() ?? ''
  const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(summary)?.[1] ?? 0)
  return {
    lines,
    summary,
    files: count('files? changed'),
    insertions: count('insertion'),
    deletions: count('deletion'),
  }
}

const PATCH_FLAGS = ['-p', '--unified=3', '--src-prefix=a/', '--dst-prefix=b/']

/**
 * `diff-tree --stat -p` output, chunk by chunk: the stat's bytes to `onStat` up to its last newline, then what follows
 * the empty line that ends it to `onPatch` (whose false stops the reading). The empty line may be cut between chunks.
 */
export function statThenPatch(
  onStat: (chunk: Buffer) => void,
  onPatch: (chunk: Buffer) => boolean,
): (chunk: Buffer) => boolean {
  let inStat = true
  let lastByte = -1
  return (chunk) => {
    if (!inStat) return onPatch(chunk)
    const across = lastByte === 10 && chunk[0] === 10 // the empty line's first newline ended the last chunk
    const at = across ? -1 : chunk.indexOf('\n\n')
    if (!across && at < 0) {
      onStat(chunk)
      lastByte = chunk.at(-1) ?? lastByte
      return true
    }
    inStat = false
    onStat(chunk.subarray(0, at + 1)) // up to the stat's last newline (none of this chunk when across)
    return onPatch(chunk.subarray(at + 2))
  }
}

/** NUL bytes the diff carries (text files that hold some) are shown as ␀: a NUL must not end the reviewer's text. */
const NUL_SHOWN = Buffer.from('\u2400')

function escapeNuls(chunk: Buffer): Buffer {
  const parts: Buffer[] = []
  let from = 0
  for (let at = chunk.indexOf(0); at >= 0; at = chunk.indexOf(0, from)) {
    parts.push(chunk.subarray(from, at), NUL_SHOWN)
    from = at + 1
  }
  parts.push(chunk.subarray(from))
  return Buffer.concat(parts)
}
