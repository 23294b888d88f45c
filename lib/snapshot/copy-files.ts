// The files of the reviewer's copy (copy.ts) on disk: written read-only from pair-loop's store and the repository's
// verified objects, or, where the run's last copy is still there, only what differs from it written again. A round
// after an edit of one file writes that file, not the whole copy: removing and writing thousands of files cost a new
// tree's review tens of seconds (bench/diff). A kept file is trusted only while its inode, size and ctime are the
// ones recorded when it was written (a write or a chmod changes its ctime, which no one can set back).
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { eachStoredBlob, type ObjectStore } from './store.ts'
import { readVerified, type RepoGit } from './verified.ts'

/** Bytes read from the repository per git call: memory stays bounded whatever the tree holds. */
const BATCH_BYTES = 32 * 1024 * 1024

/** A file to place: its path in the copy, its blob, mode and size, and where its bytes are. */
export interface Wanted {
  path: string
  oid: string
  mode: string
  source: 'store' | RepoGit
  size: number
}

/** A file as it was written, by path: what it holds and the stat it was left with. */
export interface WrittenFile {
  oid: string
  mode: string
  ino: number
  size: number
  ctimeMs: number
}

export type Written = Record<string, WrittenFile>

/**
 * `files` at `dir`, read-only, and nothing else. With `before` (what the last copy at `dir` wrote), the files it wrote
 * that are still wanted and untouched are kept and only the rest written; anything unexpected writes it whole.
 */
export async function placeFiles(
  store: ObjectStore,
  dir: string,
  files: Wanted[],
  before: Written | null,
): Promise<Written> {
  if (before)
    try {
      return await update(store, dir, files, before)
    } catch {
      // a path in the way, a file gone: the copy written whole instead
    }
  removeCopy(dir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  await writeAll(store, dir, files)
  readOnly(dir)
  return statted(dir, files)
}

/** The last copy made this one: its files not wanted now (or touched since) removed, the missing ones written. */
async function update(store: ObjectStore, dir: string, files: Wanted[], before: Written): Promise<Written> {
  const kept: Written = {}
  for (const file of files) {
    const had = before[file.path]
    if (had && had.oid === file.oid && had.mode === file.mode && untouched(join(dir, file.path), had))
      kept[file.path] = had
  }
  setFolders(dir, 0o700)
  for (const path of Object.keys(before)) if (!kept[path]) rmSync(join(dir, path), { force: true })
  removeEmptyFolders(dir)
  const fresh = files.filter((file) => !kept[file.path])
  await writeAll(store, dir, fresh)
  readOnly(dir)
  return { ...kept, ...statted(dir, fresh) }
}

const untouched = (path: string, had: WrittenFile) => {
  const now = lstatSync(path, { throwIfNoEntry: false })
  return !!now?.isFile() && now.ino === had.ino && now.size === had.size && now.ctimeMs === had.ctimeMs
}

function statted(dir: string, files: Wanted[]): Written {
  const written: Written = {}
  for (const { path, oid, mode } of files) {
    const { ino, size, ctimeMs } = lstatSync(join(dir, path))
    written[path] = { oid, mode, ino, size, ctimeMs }
  }
  return written
}

/** Every file written, a blob at a time from the store and a bounded batch at a time from each repository. */
async function writeAll(store: ObjectStore, dir: string, files: Wanted[]): Promise<void> {
  const byOid = new Map<string, Wanted[]>()
  for (const file of files) byOid.get(file.oid)?.push(file) ?? byOid.set(file.oid, [file])
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
export function readOnly(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) readOnly(join(dir, entry.name))
  chmodSync(dir, 0o555)
}

/** Every folder of the copy given `mode` (writable: files can be removed and written in it). */
function setFolders(at: string, mode: number): void {
  if (!lstatSync(at, { throwIfNoEntry: false })?.isDirectory()) return
  chmodSync(at, mode)
  for (const entry of readdirSync(at, { withFileTypes: true }))
    if (entry.isDirectory()) setFolders(join(at, entry.name), mode)
}

/** Folders left empty by the files removed, deepest first (a file may take a folder's name); the copy's own stays. */
function removeEmptyFolders(dir: string, top = true): boolean {
  let empty = true
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (!entry.isDirectory() || !removeEmptyFolders(join(dir, entry.name), false)) empty = false
  if (empty && !top) rmdirSync(dir)
  return empty
}

/** A copy removed: its folders made writable again first (rm cannot unlink from a read-only folder). */
export function removeCopy(dir: string): void {
  setFolders(dir, 0o700)
  rmSync(dir, { recursive: true, force: true })
}
