// git's object format, computed by pair-loop itself: a blob's and a tree's id, a tree's bytes in git's own order. The
// snapshot's tree id is then the id git gives the same files (`git rev-parse <commit>^{tree}`), so a person can check a
// PR head against the approved tree with git alone.
import type { Hash } from 'node:crypto'
import { createDigest } from '../ground/digest.ts'

export type ObjectFormat = 'sha1' | 'sha256'
export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag'

/** The modes a tree entry may have, as git writes them in a tree object. */
export type TreeMode = '100644' | '100755' | '120000' | '160000' | '40000'

export interface TreeEntry {
  name: string
  mode: TreeMode
  oid: string
}

/** A hash of `<type> <size>\0` followed by the content, fed in parts (a file read a chunk at a time). */
export function objectHasher(format: ObjectFormat, type: ObjectType, size: number): Hash {
  return createDigest(format).update(`${type} ${size}\0`)
}

export function objectId(format: ObjectFormat, type: ObjectType, content: Uint8Array): string {
  return objectHasher(format, type, content.length).update(content).digest('hex')
}

/** git sorts a tree's entries by their names' bytes, a folder's name as if it ended in '/'. */
const sortName = (entry: TreeEntry) => (entry.mode === '40000' ? `${entry.name}/` : entry.name)

/** Byte order; for names all ASCII (nearly always) JavaScript's own string order is the same and cheaper. */
function byGitOrder(entries: TreeEntry[]): TreeEntry[] {
  const keys = entries.map(sortName)
  let ascii = true
  let sorted = true
  for (let i = 0; i < keys.length; i++) {
    if (ascii && !/^[\x00-\x7f]*$/.test(keys[i]!)) ascii = false
    if (i > 0 && keys[i - 1]! > keys[i]!) sorted = false
  }
  if (ascii && sorted) return entries // the listing's order, usually: nothing to sort
  const keyed = entries.map((entry, i) => ({ entry, key: keys[i]! }))
  if (ascii) keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  else keyed.sort((a, b) => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8')))
  return keyed.map(({ entry }) => entry)
}

/** A tree object's content: `<mode> <name>\0<raw id>` per entry, in git's order, written into one buffer. */
export function treeContent(entries: TreeEntry[]): Buffer {
  const sorted = byGitOrder(entries)
  const idBytes = sorted[0] ? sorted[0].oid.length / 2 : 0
  let size = 0
  for (const entry of sorted) size += entry.mode.length + 2 + Buffer.byteLength(entry.name) + idBytes
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for (const entry of sorted) {
    at += out.write(entry.mode, at, 'latin1')
    out[at++] = 0x20
    at += out.write(entry.name, at, 'utf8')
    out[at++] = 0
    at += out.write(entry.oid, at, 'hex')
  }
  return out
}

/** A tree object's entries (the inverse of treeContent), for trees read from a repository. */
export function parseTree(content: Buffer, format: ObjectFormat): TreeEntry[] {
  return readTree(content, format).entries
}

/**
 * A tree object's entries, and whether treeContent would write these bytes again from them (`canonical`): normal
 * modes, names of one path step in git's order, each once. Names that are not all ASCII are never called canonical
 * (string order is not byte order for them), which only costs hashing them again.
 */
export function readTree(content: Buffer, format: ObjectFormat): { entries: TreeEntry[]; canonical: boolean } {
  const idBytes = format === 'sha1' ? 20 : 32
  const entries: TreeEntry[] = []
  let canonical = true
  let lastKey = ''
  let at = 0
  while (at < content.length) {
    const space = content.indexOf(32, at)
    const nul = content.indexOf(0, space + 1)
    if (space < 0 || nul < 0 || nul + 1 + idBytes > content.length) throw new Error('a malformed tree object')
    const raw = content.toString('latin1', at, space)
    const mode = normalMode(raw)
    const name = content.toString('utf8', space + 1, nul)
    entries.push({ mode, name, oid: content.toString('hex', nul + 1, nul + 1 + idBytes) })
    if (canonical) {
      const key = mode === '40000' ? `${name}/` : name
      const oneStep = name.length === nul - space - 1 && name !== '' && !name.includes('/') // ASCII, no slash
      canonical = raw === mode && oneStep && (entries.length === 1 || lastKey < key)
      lastKey = key
    }
    at = nul + 1 + idBytes
  }
  return { entries, canonical }
}

/** git reads old modes (100664, 040000) as their normal form, and so does pair-loop. */
function normalMode(mode: string): TreeMode {
  if (mode === '100644' || mode === '100755' || mode === '40000') return mode // nearly every entry
  if (mode === '040000') return '40000'
  if (mode === '120000' || mode === '160000') return mode
  if (/^100\d{3}$/.test(mode)) return Number.parseInt(mode.slice(3), 8) & 0o100 ? '100755' : '100644'
  throw new Error(`a tree entry of mode ${mode}`)
}

/** The `tree <id>` line of a commit object. */
export function commitTree(content: Buffer): string {
  const match = /^tree ([0-9a-f]{40,64})\n/.exec(content.toString('latin1', 0, 80))
  if (!match) throw new Error('a commit object without a tree line')
  return match[1]!
}
