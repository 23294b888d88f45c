// The working tree against the base commit, as the reviewer reads it: stat, diff, and the cap on its size.
//
// Fast: through a temporary index (temp-index.ts) whose stat cache spares every unchanged file (the cost is about
// `git status`'s). Bounded: one `git diff-index --stat -p` read as a stream, the diff kept up to the cap and git
// stopped there; files over core.bigFileThreshold are named only, as binaries are. Hardened: every call through
// lib/git.ts (no textconv, external diff, fsmonitor, hooks or filters); text files attributes show as binary, and
// files they convert, shown again as their bytes are.
import { join } from 'node:path'
import { PairLoopError } from '../errors.ts'
import { emptyTree, recordedCommit, SUBMODULE_DEPTH, safeGitStream, TREE_WALK_TIMEOUT_MS } from '../git.ts'
import { Capped } from './capped.ts'
import { changesOnDisk, convertedFiles, excludeOwn, fingerprintOf } from './changes.ts'
import { textShownAsBinary } from './forced-binary.ts'
import { diffAsOnDisk } from './on-disk.ts'
import { withTempIndex } from './temp-index.ts'

export interface WorkingDiff {
  stat: string
  diff: string
  /**
   * The diff's size in bytes. When `truncated`, a lower bound: git is stopped once the diff passes the cap, so what
   * it would have printed after that is never read (nor counted).
   */
  bytes: number
  truncated: boolean
  /** The change as bytes (changes.ts), as this diff was built: null for a diff that is not of the working tree. */
  fingerprint: string | null
}

/** Files larger than this (or than the cap, if larger) are named only: git would hold them whole to diff them. */
const WHOLE_FILE_LIMIT = 16 * 1024 * 1024
/** The stat: git lists at most this many files (then `...` and the summary line), and we keep at most these bytes. */
const STAT_FILES = 1000
const STAT_MAX_BYTES = 512 * 1024

/**
 * The working tree (untracked files included) against the base commit, through a temporary index, so the user's own
 * index is never touched. Binary files appear by name only (git's default). Each checked-out submodule follows with
 * its own changes against the commit base records for it.
 */
export async function workingDiff(repo: string, base: string, maxBytes: number): Promise<WorkingDiff> {
  const stat = new Capped(STAT_MAX_BYTES)
  const patch = new Capped(maxBytes)
  const top = { repo, base, label: '', depth: 0, stat, patch, bigFile: Math.max(WHOLE_FILE_LIMIT, maxBytes) }
  const fingerprint = await diffRepository(top)
  const statText = stat.text().trimEnd()
  return {
    stat: stat.truncated ? `${statText}\n[stat truncated at ${STAT_MAX_BYTES} bytes]` : statText,
    diff: patch.text(),
    bytes: patch.bytes,
    truncated: patch.truncated,
    fingerprint,
  }
}

interface Walk {
  repo: string
  base: string
  /** The submodule's path from the top repository, with a trailing slash ('' at the top). */
  label: string
  depth: number
  stat: Capped
  patch: Capped
  bigFile: number
}

/** The walk's repository, then its checked-out submodules; the fingerprint of the repository's own change. */
async function diffRepository(walk: Walk): Promise<string> {
  const { value: fingerprint, gitlinks } = await withTempIndex(walk.repo, walk.depth === 0, async (env) => {
    const exclude = walk.depth === 0 ? excludeOwn() : []
    const [, changes] = await Promise.all([streamDiff(walk, env), changesOnDisk(walk.repo, walk.base, env, exclude)])
    await showForcedBinaries(walk, env)
    await showAsOnDisk(walk, await convertedFiles(walk.repo, env, changes))
    return fingerprintOf(changes)
  })
  if (walk.depth < SUBMODULE_DEPTH) for (const path of gitlinks) await diffSubmodule(walk, path)
  return fingerprint
}

/** One `git diff-index --stat [-p]` against base, read as a stream: the stat first, then (if there is room) the diff. */
async function streamDiff(walk: Walk, env: NodeJS.ProcessEnv): Promise<void> {
  const withPatch = !walk.patch.truncated
  const args = [
    ...['-c', `core.bigFileThreshold=${walk.bigFile}`, 'diff-index', `--stat=200`, `--stat-count=${STAT_FILES}`],
    ...(withPatch ? ['-p', '--unified=3'] : []),
    ...['--no-color', '--no-ext-diff', '--no-textconv', '--ignore-submodules=dirty', '--find-renames', '-O/dev/null'],
    ...[`--src-prefix=a/${walk.label}`, `--dst-prefix=b/${walk.label}`, walk.base, '--', '.'],
    ...(walk.depth === 0 ? excludeOwn() : []),
  ]
  let inStat = true
  let lineStart = true
  const onData = (chunk: Buffer): boolean => {
    if (!inStat) return walk.patch.push(chunk)
    if (!withPatch) {
      walk.stat.push(chunk) // the stat is read whole (git bounds it: --stat-count), only its kept part is capped
      return true
    }
    // the stat ends at its first empty line; the diff follows
    for (let at = 0; at < chunk.length; at++) {
      if (chunk[at] !== 10) lineStart = false
      else if (!lineStart) lineStart = true
      else {
        inStat = false
        walk.stat.push(chunk.subarray(0, at))
        return walk.patch.push(chunk.subarray(at + 1))
      }
    }
    walk.stat.push(chunk)
    return true
  }
  await safeGitStream(walk.repo, args, onData, { env, timeoutMs: TREE_WALK_TIMEOUT_MS })
}

/** Text files git's attributes showed as binary, diffed again as text (`--text`) after the rest, within the cap. */
async function showForcedBinaries(walk: Walk, env: NodeJS.ProcessEnv): Promise<void> {
  const paths = walk.patch.truncated ? [] : textShownAsBinary(walk.repo, walk.label, walk.patch.text(), walk.bigFile)
  if (paths.length === 0) return
  walk.patch.pending = `Text files the repository's git attributes showed as binary above, as text:\n`
  const args = [
    'diff-index',
    '-p',
    '--text',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--ignore-submodules=dirty',
  ]
  const prefixes = [`--src-prefix=a/${walk.label}`, `--dst-prefix=b/${walk.label}`]
  const literal = { ...env, GIT_LITERAL_PATHSPECS: '1' }
  await safeGitStream(walk.repo, [...args, ...prefixes, walk.base, '--', ...paths], walk.patch.push.bind(walk.patch), {
    env: literal,
    timeoutMs: TREE_WALK_TIMEOUT_MS,
  })
  walk.patch.pending = ''
}

/** Files the repository's git attributes convert before git diffs them, diffed again as their bytes are on disk. */
async function showAsOnDisk(walk: Walk, paths: string[]): Promise<void> {
  if (paths.length === 0) return
  // git's stat counts the converted bytes (for an ident trick: no change at all): the stat names them too
  const named = paths.map(
    (path) => ` ${walk.label}${path} | bytes on disk differ from what git compares (diff below)\n`,
  )
  walk.stat.push(Buffer.from(`${walk.stat.bytes > 0 ? '\n' : ''}${named.join('')}`))
  if (walk.patch.truncated) return
  walk.patch.pending = `Files the repository's git attributes (ident, eol, working-tree-encoding) change before git diffs them, as their bytes are on disk:\n`
  await diffAsOnDisk(walk.repo, walk.base, walk.label, paths, walk.patch.push.bind(walk.patch))
  walk.patch.pending = ''
}

/** A submodule's own changes against the commit base records for it (all of its files when it is new). */
async function diffSubmodule(walk: Walk, path: string): Promise<void> {
  const repo = join(walk.repo, path)
  const label = `${walk.label}${path}`
  const recorded = await recordedCommit(walk.repo, walk.base, path)
  const against = recorded ? `its recorded commit ${recorded.slice(0, 12)}` : 'nothing (new since base)'
  walk.stat.pending = `\nSubmodule ${label}, against ${against}:\n`
  walk.patch.pending = `Submodule ${label}: its own changes against ${against}\n`
  try {
    const base = recorded ?? (await emptyTree(repo))
    await diffRepository({ ...walk, repo, base, label: `${label}/`, depth: walk.depth + 1 })
  } catch (error) {
    if (!(error instanceof PairLoopError)) throw error
    const note = Buffer.from(`Submodule ${label}: its changes cannot be shown (${error.message})\n`)
    walk.stat.push(note)
    walk.patch.push(note)
  } finally {
    walk.stat.pending = ''
    walk.patch.pending = ''
  }
}
