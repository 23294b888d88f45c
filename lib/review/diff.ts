// The working tree against the base commit, as the reviewer reads it: stat, diff, and the cap on its size.
//
// Fast: a temporary index starts as a copy of the user's, so git's stat cache spares every unchanged file (the cost is
// about `git status`'s); untracked files enter it as entries that need a look (the empty blob, no stat), so git reads
// them from the disk without hashing them into .git/objects. Bounded: one `git diff-index --stat -p` read as a stream,
// the diff kept up to the cap and git stopped there; files over core.bigFileThreshold are named only, as binaries
// are. Hardened: every call through lib/git.ts (no textconv, external diff, fsmonitor, hooks or filters), and index
// flags the coder could have set to hide a file (assume-unchanged, skip-worktree) dropped in the copy.
import { copyFileSync, existsSync, lstatSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { PairLoopError } from '../errors.ts'
import { hexDigest } from '../digest.ts'
import { Capped } from './capped.ts'
import { textShownAsBinary } from './forced-binary.ts'
import { convertedFiles, diffAsOnDisk } from './on-disk.ts'
import { nulRecords } from '../exec.ts'
import {
  emptyTree,
  HANDOFF_NAME,
  HANDOFF_TEMP_GLOB,
  isOwnFile,
  recordedCommit,
  SUBMODULE_DEPTH,
  safeGit,
  safeGitStream,
} from '../git.ts'

export interface WorkingDiff {
  stat: string
  diff: string
  /**
   * The diff's size in bytes. When `truncated`, a lower bound: git is stopped once the diff passes the cap, so what
   * it would have printed after that is never read (nor counted).
   */
  bytes: number
  truncated: boolean
}

/** Files larger than this (or than the cap, if larger) are named only: git would hold them whole to diff them. */
const WHOLE_FILE_LIMIT = 16 * 1024 * 1024
/** The stat: git lists at most this many files (then `...` and the summary line), and we keep at most these bytes. */
const STAT_FILES = 1000
const STAT_MAX_BYTES = 512 * 1024
const GIT_TIMEOUT_MS = 120_000
/** HANDOFF.md and its temp files: pair-loop's own (built when called: no import is read at module load). */
const excludeOwn = () => [`:(top,exclude)${HANDOFF_NAME}`, `:(top,exclude)${HANDOFF_TEMP_GLOB}`]

/**
 * The working tree (untracked files included) against the base commit, through a temporary index, so the user's own
 * index is never touched. Binary files appear by name only (git's default). Each checked-out submodule follows with
 * its own changes against the commit base records for it.
 */
export async function workingDiff(repo: string, base: string, maxBytes: number): Promise<WorkingDiff> {
  const stat = new Capped(STAT_MAX_BYTES)
  const patch = new Capped(maxBytes)
  await diffRepository({ repo, base, label: '', depth: 0, stat, patch, bigFile: Math.max(WHOLE_FILE_LIMIT, maxBytes) })
  const statText = stat.text().trimEnd()
  return {
    stat: stat.truncated ? `${statText}\n[stat truncated at ${STAT_MAX_BYTES} bytes]` : statText,
    diff: patch.text(),
    bytes: patch.bytes,
    truncated: patch.truncated,
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

async function diffRepository(walk: Walk): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pair-loop-index-'))
  let gitlinks: string[]
  try {
    const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') }
    gitlinks = await prepareIndex(walk.repo, env, walk.depth === 0)
    const exclude = walk.depth === 0 ? excludeOwn() : []
    const [, converted] = await Promise.all([
      streamDiff(walk, env),
      convertedFiles(walk.repo, walk.base, env, walk.bigFile, exclude),
    ])
    await showForcedBinaries(walk, env)
    await showAsOnDisk(walk, converted)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  if (walk.depth < SUBMODULE_DEPTH) for (const path of gitlinks) await diffSubmodule(walk, path)
}

/**
 * Copy the user's index into GIT_INDEX_FILE, then make it tell the truth about the working tree: each untracked file
 * (and each entry the coder flagged assume-unchanged or skip-worktree, or left unmerged) is re-entered without stat
 * data, so git compares it by content, read from the disk. Returns the checked-out submodules' paths.
 */
async function prepareIndex(repo: string, env: NodeJS.ProcessEnv, top: boolean): Promise<string[]> {
  const [format, own] = (await safeGit(repo, ['rev-parse', '--show-object-format', '--git-path', 'index'])).split('\n')
  const ownPath = isAbsolute(own!) ? own! : resolve(repo, own!)
  if (existsSync(ownPath)) copyIndex(ownPath, env.GIT_INDEX_FILE!)
  const gitlinks: string[] = []
  const untracked: string[] = []
  const removed = new Set<string>() // unmerged: every stage dropped, the file (if any) entered as new
  const reentered: string[] = [] // flagged: the same entry again, without its flags or stat data
  const cached = nulRecords((record) => {
    if (/^H (100644|100755|120000) [0-9a-f]+ 0\t/.test(record)) return // a plain file, staged: nothing to do
    const entry = /^(\S) (\d{6}) ([0-9a-f]+) (\d)\t(.*)$/s.exec(record)
    if (!entry) return
    const [, tag, mode, oid, stage, path] = entry as unknown as [string, string, string, string, string, string]
    if (stage !== '0') removed.add(`0 ${'0'.repeat(oid.length)}\t${path}`)
    else if (mode === '160000') gitlinks.push(path)
    if (stage === '0' && /[a-zS]/.test(tag) && onDisk(join(repo, path))) reentered.push(`${mode} ${oid}\t${path}`)
  })
  const others = nulRecords((path) => {
    if (path && !(top && isOwnFile(path))) untracked.push(path)
  })
  // the index listing and the untracked scan are independent: side by side
  const options = { env, timeoutMs: GIT_TIMEOUT_MS }
  await Promise.all([
    safeGitStream(repo, ['ls-files', '-z', '--stage', '-v'], cached.onData, options),
    safeGitStream(repo, ['ls-files', '-z', '--others', '--exclude-standard'], others.onData, options),
  ])
  cached.end()
  others.end()
  for (const line of removed) {
    const path = line.slice(line.indexOf('\t') + 1)
    if (onDisk(join(repo, path))) untracked.push(path)
  }
  const lines = [...removed, ...reentered]
  if (untracked.length > 0) {
    const empty = hexDigest('blob 0\0', format === 'sha256' ? 'sha256' : 'sha1') // the empty blob
    for (const path of untracked) {
      const entry = await untrackedEntry(repo, path, empty)
      if (entry) lines.push(`${entry.mode} ${entry.oid}\t${entry.path}`)
      if (entry?.mode === '160000') gitlinks.push(entry.path)
    }
  }
  if (lines.length > 0)
    await safeGit(repo, ['update-index', '-z', '--index-info'], { env, input: `${lines.join('\0')}\0` })
  return gitlinks.filter((path) => existsSync(join(repo, path, '.git')))
}

/**
 * The copy keeps the index's own mtime: git trusts an entry's stat data only when the file is older than the index
 * ("racy git"), so a fresh mtime on the copy would let a same-size edit made in the index's last second pass as clean.
 */
function copyIndex(from: string, to: string): void {
  copyFileSync(from, to)
  const { atimeMs, mtimeMs } = statSync(from)
  utimesSync(to, atimeMs / 1000, Math.floor(mtimeMs) / 1000) // rounded down: only ever more entries re-checked
}

const onDisk = (path: string) => {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/** An untracked path as an index entry git must look at: its mode from the disk, no content hashed. */
async function untrackedEntry(
  repo: string,
  listed: string,
  emptyBlob: string,
): Promise<{ mode: string; oid: string; path: string } | undefined> {
  const path = listed.replace(/\/$/, '')
  let stats: ReturnType<typeof lstatSync>
  try {
    stats = lstatSync(join(repo, path))
  } catch {
    return undefined // gone since git listed it
  }
  if (stats.isSymbolicLink()) return { mode: '120000', oid: emptyBlob, path }
  if (stats.isFile()) return { mode: stats.mode & 0o111 ? '100755' : '100644', oid: emptyBlob, path }
  // a directory git lists is a repository of its own, not yet a submodule: its checked-out commit
  const head = await safeGit(join(repo, path), ['rev-parse', '--verify', '--quiet', 'HEAD']).catch(() => '')
  return head.trim() ? { mode: '160000', oid: head.trim(), path } : undefined
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
  await safeGitStream(walk.repo, args, onData, { env, timeoutMs: GIT_TIMEOUT_MS })
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
    timeoutMs: GIT_TIMEOUT_MS,
  })
  walk.patch.pending = ''
}

/** Files the repository's git attributes convert before git diffs them, diffed again as their bytes are on disk. */
async function showAsOnDisk(walk: Walk, paths: string[]): Promise<void> {
  if (paths.length === 0 || walk.patch.truncated) return
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
