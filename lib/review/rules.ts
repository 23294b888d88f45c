// The person's rules for the reviewer (`pair_loop.review_instructions`): one file, read when a review runs, added to
// the prompt as the person's. Trusted as config is, so it must be the person's to write: outside the working tree the
// coder writes (refused there rather than pinned by hash: the coder could edit it between any two rounds), a regular
// file itself (never followed as a link, never a FIFO that would hang the read), small, and UTF-8.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative } from 'node:path'
import { fail } from '../ground/errors.ts'
import { fileKind } from '../ground/fsutil.ts'
import type { Config } from '../run/config.ts'

/** The most a rules file holds: rules, not a manual (the prompt carries it every round). */
export const RULES_MAX_BYTES = 64 * 1024

const KEY = 'pair_loop.review_instructions'

export interface PersonRules {
  path: string
  text: string
}

/** The person's rules of the run's config, read now; null when it names none. `config_invalid` names the file. */
export function readPersonRules(config: Pick<Config, 'pair_loop'>, repo: string): PersonRules | null {
  const path = config.pair_loop.review_instructions ?? null
  if (path === null) return null
  if (insideTree(path, repo))
    refused(path, `is inside the working tree ${repo}, which the coder writes: keep your rules outside it`)
  const bytes = readBounded(path)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    refused(path, 'is not UTF-8 text')
  }
  return { path, text }
}

/** The file's bytes: a regular file of at most RULES_MAX_BYTES, opened without following a link and non-blocking. */
function readBounded(path: string): Buffer {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') refused(path, 'does not exist')
    if (code === 'ELOOP') refused(path, 'is a symbolic link, not a regular file: name the file itself')
    refused(path, `cannot be read (${code ?? (error as Error).message})`)
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) refused(path, `is ${fileKind(stat)}, not a regular file`)
    if (stat.size > RULES_MAX_BYTES)
      refused(path, `is ${stat.size} bytes, over the ${RULES_MAX_BYTES} a rules file may be`)
    const buffer = Buffer.alloc(RULES_MAX_BYTES + 1)
    const read = readSync(fd, buffer, 0, buffer.length, 0)
    if (read > RULES_MAX_BYTES) refused(path, `is over the ${RULES_MAX_BYTES} bytes a rules file may be`)
    return buffer.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

/** Whether `path`'s folder, links resolved, is the working tree or below it. */
function insideTree(path: string, repo: string): boolean {
  const real = (at: string) => {
    try {
      return realpathSync(at)
    } catch {
      return at
    }
  }
  const below = relative(real(repo), real(dirname(path)))
  return below === '' || (below !== '..' && !below.startsWith('../') && !isAbsolute(below))
}

function refused(path: string, why: string): never {
  const message = `${path} (${KEY}) ${why}`
  fail('config_invalid', `${message}; fix the file, or the key in your config`, {
    path,
    keys: [KEY],
    issues: [message],
  })
}
