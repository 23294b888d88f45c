// Files named by flags (DESIGN.md, Authority: pair-loop's files are its own). Every one is lstat'ed before it is read or
// written: a FIFO would block the command, a device or a folder is no file, and none of them is ever opened. An output
// flag never names a place inside $PAIR_LOOP_HOME, directly or through a symlink: the runs' state is pair-loop's, and
// `report --out $PAIR_LOOP_HOME/runs/<id>.json` would otherwise overwrite it.
import { lstatSync, realpathSync, type Stats, statSync } from 'node:fs'
import { basename, dirname, join, relative, isAbsolute } from 'node:path'
import { fail } from './errors.ts'

/** What a path is, when it is not a regular file (null: a file, or nothing there yet). */
function oddKind(stats: Stats): string | null {
  if (stats.isDirectory()) return 'a folder'
  if (stats.isFIFO()) return 'a FIFO (named pipe)'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  if (stats.isSocket()) return 'a socket'
  return null
}

const lstatOr = (path: string) => lstatSync(path, { throwIfNoEntry: false })

/** The kind of thing `path` is, a symlink followed (lstat first, so nothing is opened): null for a file or nothing. */
function kindAt(path: string): string | null {
  const own = lstatOr(path)
  if (!own) return null
  const target = own.isSymbolicLink() ? statSync(path, { throwIfNoEntry: false }) : own
  return target ? oddKind(target) : null
}

function refuseKind(path: string, flag: string): void {
  const kind = kindAt(path)
  if (kind) fail('usage', `${path} given to ${flag} is ${kind}, not a regular file`, { flag, file: path })
}

/** An input file flag's path (absolute): refused as `usage` when it is a FIFO, a device, a socket or a folder. */
export function checkInputFile(path: string, flag: string): void {
  refuseKind(path, flag)
}

/** Where a path really is: its real path when it exists, else its folder's real path and its name (null: no folder). */
function realLocation(path: string): string | null {
  try {
    return realpathSync(path)
  } catch {}
  try {
    return join(realpathSync(dirname(path)), basename(path))
  } catch {
    return null
  }
}

const inside = (path: string, folder: string) => {
  const rel = relative(folder, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/**
 * An output file flag's path (absolute), checked: not a FIFO, device, socket or folder, and not inside `home`
 * (followed through symlinks, its own and its folders'). Returns where to write: the real location, so a symlink to a
 * file is written through, not replaced.
 */
export function checkOutputFile(path: string, flag: string, home: string): string {
  refuseKind(path, flag)
  const real = realLocation(path) ?? path
  const homeReal = realLocation(home) ?? home
  if (inside(real, homeReal) || inside(path, home))
    fail(
      'usage',
      `${flag} ${path} is inside PAIR_LOOP_HOME (${home}), which holds pair-loop's own files; write it elsewhere`,
      {
        flag,
        file: path,
        home,
      },
    )
  return real
}
