// A configured reviewer command or CLI binary may name files inside the working tree (`["sh", "scripts/review.sh"]`,
// `codex_bin: "./bin/codex"`), and the coder writes those. Each runs only if its bytes are the ones the person trusted
// (`pair-loop trust` records their SHA-256), and what runs is a copy of exactly those bytes under $PAIR_LOOP_HOME,
// so a file swapped after the check is not what runs.
import { askUntrusted } from '../run/ask.ts'
import { realpathSync, statSync } from 'node:fs'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import { hexDigest } from '../ground/digest.ts'
import { fail, isPairLoopError } from '../ground/errors.ts'
import { readRegularFile, writeFileAtomic } from '../ground/fsutil.ts'
import { trustedPrograms } from '../run/trust.ts'

const below = (path: string, dir: string) => {
  const rest = relative(dir, path)
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest))
}

/** Whether `path` lies in `repo`'s working tree, as written or once its links are followed. */
function inTree(path: string, repo: string): boolean {
  if (below(path, repo)) return true
  try {
    return below(realpathSync(path), realpathSync(repo))
  } catch {
    return false
  }
}

/**
 * The paths inside `repo`'s working tree that a command names: its program (`program`: the first word as found) and
 * each argument that names something there (relative to the repository, where custom commands used to run).
 */
export function inTreePaths(command: string[], program: string, repo: string): string[] {
  const named = [resolve(program), ...command.slice(1).map((arg) => resolve(repo, arg))]
  const exists = (path: string) => statSync(path, { throwIfNoEntry: false }) !== undefined
  return [...new Set(named.filter((path) => inTree(path, repo) && exists(path)))]
}

/** An in-tree file's bytes and SHA-256: a directory, a FIFO or a device has no bytes to trust, and is refused. */
export function readInTree(path: string, key: string): { bytes: Buffer; sha256: string } {
  const refuse: (kind: string) => never = (kind) =>
    fail(
      'config_untrusted',
      `${key} names ${path}, which is ${kind} inside the working tree: only a file's exact bytes can be trusted; name a file, or a path outside the repository`,
      { path, keys: [key], next: 'ask-user' },
    )
  let bytes: Buffer | undefined
  try {
    bytes = readRegularFile(path, refuse)
  } catch (error) {
    if (isPairLoopError(error)) throw error
    refuse(`a file pair-loop cannot read (${(error as Error).message})`)
  }
  if (bytes === undefined) refuse('a path that is no longer there')
  return { bytes, sha256: hexDigest(bytes) }
}

export interface PinOptions {
  repo: string
  home: string
  /** A folder only pair-loop writes, for the copies that run. */
  copies: string
  /** The config key the command came from, for the person. */
  key: string
}

/**
 * The command with each in-tree path it names replaced by a private copy of the bytes the person trusted there, the
 * program found as `program`; `config_untrusted` naming the file when its bytes are not the trusted ones.
 */
export function pinnedCommand(command: string[], program: string, options: PinOptions): string[] {
  const { repo, home, copies, key } = options
  const inside = new Set(inTreePaths(command, program, repo))
  if (inside.size === 0) return [command[0]!.includes('/') ? program : command[0]!, ...command.slice(1)]
  const trusted = trustedPrograms(repo, home)
  const pinned = new Map<string, string>()
  for (const path of inside) {
    const { bytes, sha256 } = readInTree(path, key)
    if (trusted[path] !== sha256)
      fail(
        'config_untrusted',
        `${key} runs ${path}, inside the working tree, which the coder writes, and you have not trusted ${trusted[path] ? 'its new content' : 'it'}: read it, then run \`pair-loop trust --cwd ${repo}\``,
        {
          path,
          keys: [key],
          sha256,
          trusted_sha256: trusted[path] ?? null,
          next: 'ask-user',
          ask: askUntrusted(repo),
        },
      )
    const copy = join(copies, sha256.slice(0, 16), basename(path))
    writeFileAtomic(copy, bytes, 0o700, { durable: false })
    pinned.set(path, copy)
  }
  const first = pinned.get(resolve(program)) ?? (command[0]!.includes('/') ? program : command[0]!)
  return [first, ...command.slice(1).map((arg) => pinned.get(resolve(repo, arg)) ?? arg)]
}
