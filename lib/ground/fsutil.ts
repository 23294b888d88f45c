// Files written so a reader never sees half of one: temp file beside it, flush, rename over.
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { context, tempRoot } from './context.ts'
import { fail } from './errors.ts'
import { isProcessAlive } from './processes.ts'

/** A folder's names; none when it is missing or cannot be read (a cache folder not made yet). */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/**
 * A private temp folder (`$TMPDIR/<prefix>XXXXXX`) for `use`, removed after it, whatever happens. Others can write in
 * `$TMPDIR`: what they drop in the folder while it is removed is retried, then left with a note, never an error.
 */
export async function withTempDir<T>(
  prefix: string,
  use: (dir: string) => Promise<T>,
  note: (text: string) => void = context().io.stderr,
): Promise<T> {
  const dir = mkdtempSync(join(tempRoot(), prefix))
  try {
    return await use(dir)
  } finally {
    removeTempDir(dir, note)
  }
}

function removeTempDir(dir: string, note: (text: string) => void): void {
  try {
    // a file created between the listing and the rmdir is ENOTEMPTY: Node retries the whole removal on it
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 })
  } catch (error) {
    note(
      `pair-loop: note: left the temp folder ${dir} behind (${(error as Error).message}): something else writes in it\n`,
    )
  }
}

/** What a path is when it is not a regular file, in a person's words. */
export function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory'
  if (stat.isFIFO()) return 'a FIFO (named pipe)'
  if (stat.isSocket()) return 'a socket'
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device'
  return stat.isFile() ? 'a regular file' : 'not a regular file'
}

/** The size of the file at `path` (following a link), or `none` when there is nothing to stat there. */
export function fileSizeOr(path: string, none: number): number {
  try {
    return statSync(path).size
  } catch {
    return none
  }
}

/**
 * A regular file's bytes, or undefined when nothing is there; anything else (a FIFO, a device, a directory, or a
 * symbolic link to one) goes to `notRegular` unopened, since reading a FIFO blocks until someone writes to it. Opened
 * non-blocking and checked again, so a file swapped for a FIFO in between cannot hang the read either.
 */
export function readRegularFile(path: string, notRegular: (kind: string) => never): Buffer | undefined {
  let stat: Stats
  try {
    stat = statSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  if (!stat.isFile()) notRegular(fileKind(stat))
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0))
  try {
    const opened = fstatSync(fd)
    if (!opened.isFile()) notRegular(fileKind(opened))
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * The first `bytes` bytes of a regular file; undefined when nothing is there, null when something else is (a symbolic
 * link, a FIFO, a directory). Opened without following a link and non-blocking: opening a FIFO to read it would wait
 * for a writer, in a system call no signal handler can interrupt.
 */
export function readFileHead(path: string, bytes: number): Buffer | null | undefined {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') return null
    throw error
  }
  try {
    if (!fstatSync(fd).isFile()) return null
    const head = Buffer.alloc(bytes)
    return head.subarray(0, readSync(fd, head, 0, bytes, 0))
  } finally {
    closeSync(fd)
  }
}

/**
 * Write `path` whole or not at all. State is flushed to the disk before the rename (`durable`, the default); a cache,
 * which is checked when read and rebuilt when unusable, skips the flushes (they are most of a warm check's writing).
 * `sweep: false` skips listing the folder for a killed writer's temp files (runs/ with a long history: the caller
 * knows there are none).
 */
export function writeFileAtomic(
  path: string,
  content: string | Uint8Array,
  mode = 0o600,
  { durable = true, sweep = true }: { durable?: boolean; sweep?: boolean } = {},
): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  if (sweep) removeLeftoverTemps(path)
  const { pid, now } = context()
  const temp = join(dir, `.${basename(path)}.${pid}.${now()}.tmp`)
  const fd = openSync(temp, 'w', mode)
  try {
    writeAll(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content)
    if (durable) fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    try {
      unlinkSync(temp)
    } catch {}
    throw error
  }
  closeSync(fd)
  try {
    renameSync(temp, path)
  } catch (error) {
    try {
      unlinkSync(temp)
    } catch {}
    throw error
  }
  if (durable) syncDir(dir)
}

/**
 * A write(2) may write less than asked: at the file-size limit, or as a disk fills, the first call comes back short
 * and only the next one fails. Loop until every byte is down, so a short file is never renamed over a good one.
 */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let offset = 0; offset < bytes.length; ) {
    const written = writeSync(fd, bytes, offset, bytes.length - offset)
    if (written <= 0)
      throw Object.assign(new Error(`write returned ${written} with ${bytes.length - offset} bytes left`), {
        code: 'EIO',
      })
    offset += written
  }
}

/** Temp files of a writer that was killed half-way (a live writer's is its own: a cache is written without a lock). */
export function removeLeftoverTemps(path: string): void {
  const prefix = `.${basename(path)}.`
  let names: string[]
  try {
    names = readdirSync(dirname(path))
  } catch {
    return
  }
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith('.tmp') && !writtenByAnother(name.slice(prefix.length))) {
      try {
        unlinkSync(join(dirname(path), name))
      } catch {}
    }
  }
}

/**
 * A temp file another live process is writing right now (`<pid>.<ms>.tmp`): a cache written without a lock by two
 * commands at once (the snapshot's) must not lose the other's file before its rename. A killed writer's is left over.
 */
function writtenByAnother(rest: string): boolean {
  const pid = Number(/^(\d+)\./.exec(rest)?.[1])
  return Number.isSafeInteger(pid) && pid > 0 && pid !== context().pid && isProcessAlive(pid)
}

function syncDir(dir: string): void {
  // Makes the rename itself durable; not every filesystem allows fsync on a directory.
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {}
}

/**
 * A filesystem that refused a read or a write (full, read-only, over quota or the file-size limit, no permission, a
 * file where a folder should be) said plainly as `io_error`; writers write atomically, so the old file is intact.
 */
export function ioFailure(path: string, error: unknown, verb: 'read' | 'write' = 'write'): never {
  const errno = (error as NodeJS.ErrnoException).code
  if (typeof errno !== 'string') throw error
  const fix =
    verb === 'write'
      ? 'the previous state is intact. Check that PAIR_LOOP_HOME is a writable directory with free space, then run the command again'
      : 'check its permissions, and that PAIR_LOOP_HOME is a directory'
  fail('io_error', `cannot ${verb} ${path} (${(error as Error).message}); ${fix}`, { path, errno })
}

/** A cache file's JSON object, keeping the entries whose value `keep` accepts; {} when it is missing or damaged. */
export function readJsonRecord<T>(file: string, keep: (value: unknown) => value is T): Record<string, T> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {}
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, T] => keep(entry[1])))
  } catch {
    return {}
  }
}
