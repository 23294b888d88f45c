// A tree as a flat list of its leaves (path → mode and id), and back: the base's, read from the repository with every
// object verified (and kept under $PAIR_LOOP_HOME once verified: a tree id names its content for good), and the
// snapshot's, whose tree id is computed here the way git computes it.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { objectId, readTree, type TreeEntry, type TreeMode, treeContent } from './objects.ts'
import { type ObjectReader, readVerified, type RepoGit } from './verified.ts'

export interface Leaf {
  mode: TreeMode
  oid: string
}

/** Leaves by path from the tree's top: blobs, links, gitlinks, and a folded submodule's tree (mode 40000). */
export type Manifest = Map<string, Leaf>

const treesDir = (home: string) => join(home, 'cache', 'snapshot', 'trees')
const manifestFile = (home: string, tree: string) => join(treesDir(home), `${tree}.leaves`)
/** Where a manifest was kept as JSON before (still read: an approved tree's may be one). */
const jsonManifestFile = (home: string, tree: string) => join(treesDir(home), `${tree}.json`)

/**
 * The ids of a base's folders whose tree objects are exactly what manifestTree makes of their leaves (sorted, normal
 * modes, no empty folder inside): a folder with no change under it has that id again, without being hashed.
 */
const baseFolders = new WeakMap<Manifest, Map<string, string>>()

/** The leaves of `tree` in the repository, every tree object verified on the way (`read`); cached by tree id. */
export async function treeManifest(
  git: RepoGit,
  tree: string,
  home: string,
  what: string,
  read: ObjectReader = (ids, asked) => readVerified(git, ids, asked),
): Promise<Manifest> {
  const cached = readManifest(home, tree)
  if (cached) return cached
  const manifest: Manifest = new Map()
  const folders: { dir: string; oid: string; canonical: boolean; leaves: number; inside: string[] }[] = []
  let level: { prefix: string; oid: string }[] = [{ prefix: '', oid: tree }]
  while (level.length > 0) {
    const objects = await read(
      level.map((item) => item.oid),
      what,
    )
    const next: typeof level = []
    for (const { prefix, oid } of level) {
      const object = objects.get(oid)
      if (object?.type !== 'tree')
        fail('git_error', `the tree ${oid} of ${what} is missing from ${git.repo} (a shallow or partial clone?)`, {
          repo: git.repo,
          object: oid,
        })
      const { entries, canonical } = readTree(object.content, git.format)
      const folder = { dir: prefix.slice(0, -1), oid, canonical, leaves: 0 }
      const inside: string[] = []
      for (const entry of entries) {
        const path = `${prefix}${entry.name}`
        if (entry.mode === '40000') {
          next.push({ prefix: `${path}/`, oid: entry.oid })
          inside.push(path)
        } else {
          manifest.set(path, { mode: entry.mode, oid: entry.oid })
          folder.leaves++
        }
      }
      folders.push({ ...folder, inside })
    }
    level = next
  }
  // deepest first: a folder is reused only if every folder inside it is, and none is empty (it would vanish)
  const reusable = new Map<string, string>()
  const filled = new Set<string>()
  for (const { dir, oid, canonical, leaves, inside } of folders.reverse()) {
    if (leaves > 0 || inside.some((sub) => filled.has(sub))) filled.add(dir)
    if (canonical && inside.every((sub) => reusable.has(sub) && filled.has(sub))) reusable.set(dir, oid)
  }
  baseFolders.set(manifest, reusable)
  saveManifest(home, tree, manifest)
  return manifest
}

/** The folders of a base read from its repository that need not be hashed again when nothing under them changed. */
export const reusableFolders = (base: Manifest): Map<string, string> | undefined => baseFolders.get(base)

/** A snapshot's leaves kept by its tree id (once: an id names its leaves), so a head that differs from a tree handed
 * over or approved can be told by path (ship.ts). */
export function keepManifest(home: string, tree: string, manifest: Manifest): void {
  if (!existsSync(manifestFile(home, tree))) saveManifest(home, tree, manifest)
}

export function readManifest(home: string, tree: string): Manifest | null {
  try {
    return decodeManifest(readFileSync(manifestFile(home, tree)), tree.length / 2)
  } catch {
    return readJsonManifest(home, tree)
  }
}

function readJsonManifest(home: string, tree: string): Manifest | null {
  try {
    const rows = JSON.parse(readFileSync(jsonManifestFile(home, tree), 'utf8')) as [string, TreeMode, string][]
    return new Map(rows.map(([path, mode, oid]) => [path, { mode, oid }]))
  } catch {
    return null
  }
}

export function saveManifest(home: string, tree: string, manifest: Manifest): void {
  writeFileAtomic(manifestFile(home, tree), encodeManifest(manifest, tree.length / 2), 0o600, { durable: false })
}

/** A leaf's mode as one byte of a kept manifest. */
const MODES: readonly TreeMode[] = ['100644', '100755', '120000', '160000', '40000']

/**
 * A manifest as bytes: per leaf its mode's place in MODES, its raw id, its path and a NUL (no path holds one). Written
 * and read with a few native calls per leaf: JSON cost tens of milliseconds for 30k leaves, on a first snapshot twice.
 */
function encodeManifest(manifest: Manifest, idBytes: number): Buffer {
  let size = 0
  for (const path of manifest.keys()) size += 2 + idBytes + path.length * 3 // a UTF-16 unit is at most 3 UTF-8 bytes
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for (const [path, { mode, oid }] of manifest) {
    out[at++] = MODES.indexOf(mode)
    at += out.write(oid, at, 'hex')
    at += out.write(path, at, 'utf8')
    out[at++] = 0
  }
  return out.subarray(0, at)
}

/** The leaves of encodeManifest's bytes; throws on bytes it did not write. */
function decodeManifest(data: Buffer, idBytes: number): Manifest {
  const manifest: Manifest = new Map()
  for (let at = 0; at < data.length; ) {
    const mode = MODES[data[at]!]
    const end = data.indexOf(0, at + 1 + idBytes)
    if (!mode || end < 0) throw new Error('not a kept manifest')
    manifest.set(data.toString('utf8', at + 1 + idBytes, end), {
      mode,
      oid: data.toString('hex', at + 1, at + 1 + idBytes),
    })
    at = end + 1
  }
  return manifest
}

/** What manifestTree may take from the base: its reusable folders' ids, and the paths that differ from it. */
export interface FromBase {
  folders: Map<string, string>
  changed: string[]
}

/**
 * The id of the tree these leaves make; `write` receives every tree object on the way (to store them). With `fromBase`,
 * a folder of the base with no changed path under it keeps its id (its leaves are the base's, verified).
 */
export function manifestTree(
  manifest: Manifest,
  format: RepoGit['format'],
  write?: (content: Buffer) => void,
  fromBase?: FromBase,
): string {
  const kept = fromBase && !write ? fromBase.folders : new Map<string, string>() // a tree to write must be made
  const touched = new Set<string>([''])
  for (const path of fromBase?.changed ?? [])
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1))
      touched.add(path.slice(0, slash))
  const reused = (dir: string) => kept.has(dir) && !touched.has(dir)
  const dirs = new Map<string, TreeEntry[]>([['', []]])
  const folder = (dir: string): TreeEntry[] => {
    let entries = dirs.get(dir)
    if (entries) return entries
    entries = []
    dirs.set(dir, entries)
    const slash = dir.lastIndexOf('/')
    folder(slash < 0 ? '' : dir.slice(0, slash)).push({ name: dir.slice(slash + 1), mode: '40000', oid: '' })
    return entries
  }
  // paths come grouped by folder (in git's order): the last folder's entries are reused without a lookup
  let lastDir = ''
  let lastEntries: TreeEntry[] | null = dirs.get('')!
  for (const [path, leaf] of manifest) {
    const slash = path.lastIndexOf('/')
    const same = slash < 0 ? lastDir === '' : slash === lastDir.length && path.startsWith(lastDir)
    if (!same) {
      lastDir = slash < 0 ? '' : path.slice(0, slash)
      const entries = folder(lastDir)
      lastEntries = reused(lastDir) ? null : entries // a reused folder's leaves are not needed
    }
    lastEntries?.push({ name: path.slice(slash + 1), mode: leaf.mode, oid: leaf.oid })
  }
  // deepest folders first: a folder's id is known before its parent's entry needs it
  const order = [...dirs.keys()].map((dir) => ({ dir, depth: depth(dir) })).sort((a, b) => b.depth - a.depth)
  const ids = new Map<string, string>()
  for (const { dir } of order) {
    if (reused(dir)) {
      ids.set(dir, kept.get(dir)!)
      continue
    }
    const entries = dirs.get(dir)!
    for (const entry of entries)
      if (entry.mode === '40000' && entry.oid === '') entry.oid = ids.get(dir ? `${dir}/${entry.name}` : entry.name)!
    const content = treeContent(entries)
    write?.(content)
    ids.set(dir, objectId(format, 'tree', content))
  }
  return ids.get('')!
}

const depth = (dir: string) => (dir === '' ? 0 : dir.split('/').length)
