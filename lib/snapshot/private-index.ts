// pair-loop's own git index under $PAIR_LOOP_HOME, used only so git can tell, at C speed, which files' stat data moved
// since pair-loop last hashed them (`git diff-files`, the same stat check `git status` makes). Its ids are pair-loop's
// raw blob ids XORed with a fixed mask: no content hashes to such an id, so git's content check of a stat-dirty entry
// never calls it clean (an attribute that converts bytes cannot make a changed file look unchanged). The coder cannot
// write it; the repository's own index is never read for stat data.
import { context } from '../ground/context.ts'
import { type BigIntStats, closeSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { createDigest, hexDigest } from '../ground/digest.ts'
import { nulRecords } from '../ground/exec.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { safeGitStream, TREE_WALK_TIMEOUT_MS } from '../ground/git.ts'
import type { BlobKind } from './files.ts'
import { pinned, type RepoGit } from './verified.ts'
import type { ObjectFormat } from './objects.ts'

export interface IndexEntry {
  /** The real blob id (unmasked). */
  oid: string
  mode: '100644' | '100755' | '120000'
  /** The entry as it is on disk in the index file (kept whole when carried over). */
  raw: Uint8Array
}

const SIGNATURE = 0x44495243 // "DIRC"

const masks = new Map<ObjectFormat, Buffer>()
function mask(format: ObjectFormat): Buffer {
  const known = masks.get(format)
  if (known) return known
  const key = createDigest(format).update('pair-loop private index: never a content hash').digest()
  masks.set(format, key)
  return key
}

/** The entries of a private index file by path; null when it is missing or not one pair-loop wrote. */
export function readPrivateIndex(file: string, format: ObjectFormat): Map<string, IndexEntry> | null {
  let data: Buffer
  try {
    data = readFileSync(file)
  } catch {
    return null
  }
  const idBytes = format === 'sha1' ? 20 : 32
  if (data.length < 12 + idBytes || data.readUInt32BE(0) !== SIGNATURE || data.readUInt32BE(4) !== 2) return null
  const key = mask(format)
  const count = data.readUInt32BE(8)
  const entries = new Map<string, IndexEntry>()
  const id = Buffer.allocUnsafe(idBytes) // one buffer for every id: unmasked in place, then read as hex
  let at = 12
  for (let n = 0; n < count; n++) {
    const nameAt = at + 40 + idBytes + 2
    const end = data.indexOf(0, nameAt)
    if (end < 0) return null
    data.copy(id, 0, at + 40, at + 40 + idBytes)
    for (let i = 0; i < idBytes; i++) id[i]! ^= key[i]!
    const mode = data.readUInt32BE(at + 24)
    const size = Math.ceil((end - at + 1) / 8) * 8
    entries.set(data.toString('utf8', nameAt, end), {
      oid: id.toString('hex'),
      mode: mode === 0o120000 ? '120000' : mode & 0o100 ? '100755' : '100644',
      raw: data.subarray(at, at + size),
    })
    at += size
  }
  return entries
}

/** One entry, from a file's stat data (with nanoseconds) and its real blob id. */
export function indexEntry(
  path: string,
  stats: BigIntStats,
  oid: string,
  mode: IndexEntry['mode'],
  format: ObjectFormat,
): IndexEntry {
  const idBytes = format === 'sha1' ? 20 : 32
  const nameAt = 40 + idBytes + 2
  const nameLength = Buffer.byteLength(path, 'utf8')
  const size = Math.ceil((nameAt + nameLength + 1) / 8) * 8
  // from the shared pool (one allocation per entry costs more than its bytes); every byte is written below
  const raw = Buffer.allocUnsafe(size)
  writeTime(raw, 0, stats.ctimeNs)
  writeTime(raw, 8, stats.mtimeNs)
  // dev, uid, gid, size: below 2^53, exact as numbers; an inode number may pass 2^53
  raw.writeUInt32BE(Number(stats.dev) % 2 ** 32, 16)
  raw.writeUInt32BE(Number(BigInt.asUintN(32, stats.ino)), 20)
  raw.writeUInt32BE(MODE_BITS[mode], 24)
  raw.writeUInt32BE(Number(stats.uid) % 2 ** 32, 28)
  raw.writeUInt32BE(Number(stats.gid) % 2 ** 32, 32)
  raw.writeUInt32BE(Number(stats.size) % 2 ** 32, 36)
  raw.write(oid, 40, 'hex')
  const key = mask(format)
  for (let i = 0; i < idBytes; i++) raw[40 + i]! ^= key[i]!
  raw.writeUInt16BE(Math.min(nameLength, 0xfff), 40 + idBytes)
  raw.write(path, nameAt, 'utf8')
  raw.fill(0, nameAt + nameLength) // the name's NUL and the padding
  return { oid, mode, raw }
}

const MODE_BITS: Record<IndexEntry['mode'], number> = { '100644': 0o100644, '100755': 0o100755, '120000': 0o120000 }

/**
 * A time as git stores it: whole seconds, then nanoseconds (0 to 1e9, before 1970 too). One BigInt remainder: the
 * seconds are rounded from the approximate number, exact since the error of a double there is far below half a second.
 */
function writeTime(raw: Buffer, at: number, ns: bigint): void {
  const rest = Number(ns % 1_000_000_000n)
  const nsec = rest < 0 ? rest + 1_000_000_000 : rest
  raw.writeUInt32BE(Math.round((Number(ns) - nsec) / 1e9) >>> 0, at)
  raw.writeUInt32BE(nsec, at + 4)
}

/** The entries in the byte order of their paths; for names all ASCII (nearly always) JavaScript's string order is it. */
function byPathBytes(entries: Map<string, IndexEntry>): IndexEntry[] {
  const paths = [...entries.keys()]
  if (paths.every((path) => /^[\x00-\x7f]*$/.test(path))) return paths.sort().map((path) => entries.get(path)!)
  return paths
    .map((path) => ({ key: Buffer.from(path, 'utf8'), entry: entries.get(path)! }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ entry }) => entry)
}

/** Write the index (entries sorted by path bytes, as git requires), whole or not at all; its checksum (hex). */
export function writePrivateIndex(file: string, entries: Map<string, IndexEntry>, format: ObjectFormat): string {
  const header = Buffer.alloc(12)
  header.writeUInt32BE(SIGNATURE, 0)
  header.writeUInt32BE(2, 4)
  header.writeUInt32BE(entries.size, 8)
  const body = Buffer.concat([header, ...byPathBytes(entries).map((entry) => entry.raw)])
  const trailer = createDigest(format).update(body).digest()
  const temp = `${file}.${context().pid}.tmp`
  const fd = openSync(temp, 'w', 0o600)
  try {
    writeSync(fd, body)
    writeSync(fd, trailer)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
  return trailer.toString('hex')
}

export const privateIndexPath = (home: string, git: RepoGit) =>
  join(home, 'cache', 'snapshot', `${hexDigest(`${git.format}:${git.repo}`).slice(0, 24)}.${KINDS_RULE}.index`)

/**
 * Which rule judged text from binary (files.ts blobKind): the index and what is kept beside it (kinds, the last
 * snapshot) name it, so kinds judged by an earlier rule (a Makefile once "binary") are never read again.
 */
const KINDS_RULE = 'k2'

/** The kinds of the index's blobs that are not plain text (binary, too big, text with NULs), beside it. */
export function readKinds(indexFile: string): Record<string, BlobKind> {
  try {
    const parsed = JSON.parse(readFileSync(`${indexFile}.kinds.json`, 'utf8'))
    return parsed && typeof parsed === 'object' ? parsed : {}
  } catch {
    return {}
  }
}

export function writeKinds(indexFile: string, kinds: Record<string, BlobKind>): void {
  writeFileAtomic(`${indexFile}.kinds.json`, JSON.stringify(kinds), 0o600, { durable: false })
}

/** The private index's paths whose stat data git finds changed (or too recent to trust): git's own stat check. */
export async function statDirty(git: RepoGit, indexFile: string): Promise<Set<string>> {
  const dirty = new Set<string>()
  const records = nulRecords((path) => {
    if (path) dirty.add(path)
  })
  const flags = ['-c', 'core.fileMode=true', '-c', 'core.symlinks=true', 'diff-files', '-z', '--name-only']
  await safeGitStream(git.repo, [...flags, '--no-renames', '--no-ext-diff', '--no-textconv'], records.onData, {
    env: pinned(git, { GIT_INDEX_FILE: indexFile }),
    timeoutMs: TREE_WALK_TIMEOUT_MS,
  })
  records.end()
  return dirty
}
