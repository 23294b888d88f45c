// What pair-loop asks of git, through zx: where the repository is, what changed, and the HANDOFF.md exclude.
import { existsSync, readFileSync, realpathSync, statSync, appendFileSync, mkdirSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fail } from './errors.ts'
import { exec, execOrFail } from './exec.ts'
import { firstLineOf } from './text.ts'
import type { DiffStat } from './state.ts'

export const HANDOFF_NAME = 'HANDOFF.md'
/** The temp file of a HANDOFF.md write (lib/fsutil.ts), left behind only by a writer killed half-way: ours too. */
export const HANDOFF_TEMP_GLOB = `.${HANDOFF_NAME}.*.tmp`
const isOwnFile = (path: string) => path === HANDOFF_NAME || /^\.HANDOFF\.md\.\d+\.\d+\.tmp$/.test(path)

const git = (cwd: string, args: string[]) => execOrFail('git', args, { cwd, code: 'git_error' })

export async function topLevel(cwd: string): Promise<string> {
  if (!existsSync(cwd)) fail('git_error', `directory ${cwd} does not exist`, { cwd })
  const result = await exec('git', ['rev-parse', '--show-toplevel'], { cwd })
  if (!result.ok) fail('git_error', `${cwd} is not inside a git repository (${firstLineOf(result.stderr)})`, { cwd })
  return realpathSync(result.stdout.trim())
}

/**
 * The repository top level without running git (status must start fast): the nearest folder holding `.git`.
 * Used only to match a directory against recorded runs, whose `repo` came from git itself.
 */
export function findTopLevelFast(cwd: string): string | undefined {
  let dir: string
  try {
    dir = realpathSync(cwd)
  } catch {
    return undefined
  }
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

export async function headSha(cwd: string): Promise<string> {
  return (await git(cwd, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim()
}

export async function resolveCommit(cwd: string, rev: string): Promise<string> {
  const result = await exec('git', ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`], { cwd })
  if (!result.ok)
    fail('git_error', `unknown base ${JSON.stringify(rev)}: ${firstLineOf(result.stderr)}`, {
      flag: '--base',
      base: rev,
    })
  return result.stdout.trim()
}

/** `rev` as a local branch name, or null when it names a commit, a tag or a remote ref. */
export async function localBranch(cwd: string, rev: string): Promise<string | null> {
  const result = await exec('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${rev}`], { cwd })
  return result.ok ? rev : null
}

export async function currentBranch(cwd: string): Promise<string> {
  const name = (await git(cwd, ['branch', '--show-current'])).trim()
  return name || 'HEAD'
}

/** Uncommitted paths, untracked included; HANDOFF.md (and a temp file of its write) is pair-loop's own and never counts. */
export async function dirtyPaths(cwd: string): Promise<string[]> {
  const out = await git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all'])
  const paths: string[] = []
  const entries = out.split('\0').filter(Boolean)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const status = entry.slice(0, 2)
    paths.push(entry.slice(3))
    if (status.includes('R') || status.includes('C')) i++ // rename/copy: the next entry is the old path
  }
  return paths.filter((path) => !isOwnFile(path))
}

/** Files changed, lines added and removed between base and the working tree (tracked files). */
export async function diffStat(cwd: string, base: string): Promise<DiffStat> {
  const out = await git(cwd, ['diff', '--numstat', '-z', base, '--', '.', `:(exclude)${HANDOFF_NAME}`])
  const stat = { files: 0, insertions: 0, deletions: 0 }
  for (const record of out.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(record)
    if (!match) continue
    stat.files++
    stat.insertions += match[1] === '-' ? 0 : Number(match[1])
    stat.deletions += match[2] === '-' ? 0 : Number(match[2])
  }
  const untracked = (await git(cwd, ['ls-files', '--others', '--exclude-standard', '-z']))
    .split('\0')
    .filter((p) => p && !isOwnFile(p))
  for (const path of untracked) {
    stat.files++
    stat.insertions += countLines(join(cwd, path))
  }
  return stat
}

function countLines(path: string): number {
  try {
    if (statSync(path).size > 50_000_000) return 0
    const data = readFileSync(path)
    if (data.includes(0)) return 0 // binary: git counts no lines either
    let lines = 0
    for (const byte of data) if (byte === 10) lines++
    return data.length > 0 && data[data.length - 1] !== 10 ? lines + 1 : lines
  } catch {
    return 0
  }
}

/** The repository's own exclude file (shared by worktrees through the common dir), never a tracked .gitignore. */
export async function excludeFile(cwd: string): Promise<string> {
  const path = (await git(cwd, ['rev-parse', '--git-path', 'info/exclude'])).trim()
  return isAbsolute(path) ? path : resolve(cwd, path)
}

export async function ensureExcluded(cwd: string, name = HANDOFF_NAME): Promise<string> {
  const file = await excludeFile(cwd)
  const line = `/${name}`
  const current = existsSync(file) ? readFileSync(file, 'utf8') : ''
  if (!current.split(/\r?\n/).includes(line)) {
    mkdirSync(dirname(file), { recursive: true })
    appendFileSync(file, `${current && !current.endsWith('\n') ? '\n' : ''}${line}\n`)
  }
  return file
}
