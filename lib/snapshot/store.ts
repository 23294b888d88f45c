// pair-loop's own object store: a bare git repository under $PAIR_LOOP_HOME, which the coder cannot write. The
// snapshot's changed files and the base's verified blobs are written here, and the reviewer's diff is computed here,
// by git reading these objects only, with no configuration, attributes or hooks but the store's own.
import { context } from '../ground/context.ts'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { execStream, type StreamResult } from '../ground/exec.ts'
import { fail } from '../ground/errors.ts'
import type { BlobKind } from './files.ts'
import { batchReader } from './verified.ts'
import { type ObjectFormat, type ObjectType, objectId } from './objects.ts'

export interface ObjectStore {
  dir: string
  format: ObjectFormat
}

/** The store for `format` under `home`, made on first use (no `git init`: its templates and config are the user's). */
export function objectStore(home: string, format: ObjectFormat): ObjectStore {
  const dir = join(home, 'store', `${format}.git`)
  if (!existsSync(join(dir, 'HEAD'))) {
    for (const sub of ['objects', 'refs/heads', 'refs/tags'])
      mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 })
    const extensions = format === 'sha256' ? '[extensions]\n\tobjectformat = sha256\n' : ''
    const version = format === 'sha256' ? 1 : 0
    writeFileSync(join(dir, 'config'), `[core]\n\trepositoryformatversion = ${version}\n\tbare = true\n${extensions}`)
    writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n')
  }
  return { dir, format }
}

const objectPath = (store: ObjectStore, oid: string) => join(store.dir, 'objects', oid.slice(0, 2), oid.slice(2))

/** Write an object (once: an id names its content), whole or not at all; its id. */
export function writeObject(store: ObjectStore, type: ObjectType, content: Uint8Array): string {
  const oid = objectId(store.format, type, content)
  const path = objectPath(store, oid)
  if (existsSync(path)) return oid
  mkdirSync(join(store.dir, 'objects', oid.slice(0, 2)), { recursive: true, mode: 0o700 })
  const temp = `${path}.${context().pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(temp, deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 }))
  renameSync(temp, path)
  return oid
}

export const hasObject = (store: ObjectStore, oid: string) => existsSync(objectPath(store, oid))

/** Where a blob too big to keep has its size noted: it is named with its size, and its bytes are never kept. */
const sizeNotePath = (store: ObjectStore, oid: string) => join(store.dir, 'sizes', oid.slice(0, 2), oid.slice(2))

/** A blob too big to keep (files.ts WHOLE_FILE_LIMIT): its size in bytes noted in the store, once. */
export function noteSize(store: ObjectStore, oid: string, size: number): void {
  const path = sizeNotePath(store, oid)
  if (existsSync(path)) return
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.${context().pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(temp, String(size))
  renameSync(temp, path)
}

/**
 * The diff can show this blob: its bytes are in the store, or (too big to keep) its size is noted. A binary's bytes are
 * kept too, though never shown: it is named with its size, read from them.
 */
export const showable = (store: ObjectStore, oid: string, kind: BlobKind | undefined) =>
  kind === 'big' ? existsSync(sizeNotePath(store, oid)) : hasObject(store, oid)

/** The sizes in bytes of the store's blobs among `oids`, and of those too big to keep from their notes. */
export async function storedSizes(store: ObjectStore, oids: string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  const unique = [...new Set(oids)]
  const stored = unique.filter((oid) => hasObject(store, oid))
  if (stored.length) {
    const chunks: Buffer[] = []
    const input = `${stored.join('\n')}\n`
    await storeGit(store, ['cat-file', '--batch-check'], (chunk) => chunks.push(chunk) > 0, 120_000, input)
    for (const line of Buffer.concat(chunks).toString('latin1').split('\n')) {
      const match = /^([0-9a-f]+) blob (\d+)$/.exec(line)
      if (match) sizes.set(match[1]!, Number(match[2]))
    }
  }
  for (const oid of unique) {
    if (sizes.has(oid)) continue
    const noted = Number(readIfThere(sizeNotePath(store, oid)))
    if (Number.isSafeInteger(noted) && noted >= 0) sizes.set(oid, noted)
  }
  return sizes
}

const readIfThere = (path: string): string => {
  try {
    return readFileSync(path, 'latin1').trim() || 'none'
  } catch {
    return 'none'
  }
}

/** git with nothing of the user's: no system or global config, no attributes, no replace refs, no pager. */
function storeEnv(store: ObjectStore): NodeJS.ProcessEnv {
  const keep = ['PATH', 'SYSTEMROOT', 'LANG', 'LC_ALL', 'TZ']
  const outside = context().env
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    keep.filter((key) => outside[key]).map((key) => [key, outside[key]]),
  )
  return {
    ...env,
    GIT_DIR: store.dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_TERMINAL_PROMPT: '0',
    HOME: store.dir,
    XDG_CONFIG_HOME: join(store.dir, 'no-config'),
  }
}

const STORE_FLAGS = ['--no-pager', '-c', 'core.attributesFile=/dev/null', '-c', 'core.quotePath=false']

/** A git call on the store, read as a stream; `git_error` on failure unless the reader stopped it. */
export async function storeGit(
  store: ObjectStore,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  timeoutMs = 120_000,
  input?: string,
): Promise<StreamResult> {
  const result = await execStream('git', [...STORE_FLAGS, ...args], onData, {
    cwd: store.dir,
    env: storeEnv(store),
    timeoutMs,
    input,
  })
  if (!result.ok && !result.stopped)
    fail(
      'git_error',
      `git ${args[0]} on pair-loop's object store failed: ${result.stderr.trim().split('\n')[0] || `exit ${result.exitCode}`}`,
      {
        store: store.dir,
      },
    )
  return result
}

/** Blobs of the store, each handed to `onBlob` as `cat-file --batch` reads it (one git call; none is held after). */
export async function eachStoredBlob(
  store: ObjectStore,
  oids: string[],
  onBlob: (oid: string, content: Buffer) => void,
): Promise<void> {
  if (oids.length === 0) return
  const reader = batchReader((header, content) => {
    const match = /^([0-9a-f]+) blob (\d+)$/.exec(header)
    if (!match) fail('git_error', `pair-loop's object store has no blob ${header.split(' ')[0]}`, { store: store.dir })
    if (!content) return Number(match[2]) + 1 // the content and its newline
    onBlob(match[1]!, content.subarray(0, content.length - 1))
    return 0
  })
  await storeGit(store, ['cat-file', '--batch'], reader.push, 120_000, `${oids.join('\n')}\n`)
}
