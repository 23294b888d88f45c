// What pair-loop asks of git: where the repository is, what changed, and the HANDOFF.md exclude. Every call goes through
// safeGit/gitTry/safeGitStream (or plainGit/plainGitTry/plainGitStream for a call that converts no content), which turn
// off what the repository could configure to run a program or change the bytes git reads (DESIGN.md, Trust): the
// working tree is the coder's, and so are .git/config and .git/info/attributes.
import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { type Context, context } from './context.ts'
import { fail } from './errors.ts'
import { type ExecResult, execStream, nulRecords, type StreamOptions, type StreamResult } from './exec.ts'
import { gitFailed, headFailed } from './git-messages.ts'

export const HANDOFF_NAME = 'HANDOFF.md'
export const TREE_WALK_TIMEOUT_MS = 120_000 // a git call that reads the whole tree: minutes on a huge one, not forever

/**
 * On every call: no pager, no replace refs (they could swap the base's content), no fsmonitor hook, no hooks (an
 * index write runs post-index-change), no untracked cache or stat shortcuts the repository could have set to hide a
 * change, no CRLF conversion. Diffs add --no-ext-diff and --no-textconv themselves; filter and diff drivers the
 * config names are blanked per repository (driverOverrides).
 */
const FIXED = [
  '--no-pager',
  '--no-replace-objects',
  ...['fsmonitor=false', 'hooksPath=/dev/null', 'untrackedCache=false', 'splitIndex=false', 'quotePath=false']
    .concat(['autocrlf=false', 'ignoreStat=false', 'trustctime=true', 'checkStat=default'])
    .flatMap((setting) => ['-c', `core.${setting}`]),
]

/** The environment of every call: no optional index writes (status leaves the user's index alone), no lazy fetch, no prompt. */
const safeEnv = (env: Readonly<NodeJS.ProcessEnv> = context().env): NodeJS.ProcessEnv => ({
  ...env,
  GIT_OPTIONAL_LOCKS: '0',
  GIT_NO_LAZY_FETCH: '1',
  GIT_TERMINAL_PROMPT: '0',
})

/**
 * A value asked of git once per command (its Context) and repository. Never kept across commands: a config or HEAD
 * changed between two commands run in one process is read again.
 */
export function perCommand<T>(): (cwd: string, ask: () => Promise<T>) => Promise<T> {
  const byCommand = new WeakMap<Context, Map<string, Promise<T>>>()
  return (cwd, ask) => {
    const ctx = context()
    const byRepo = byCommand.get(ctx) ?? new Map<string, Promise<T>>()
    byCommand.set(ctx, byRepo)
    const known = byRepo.get(cwd) ?? ask()
    byRepo.set(cwd, known)
    return known
  }
}

const overridesOnce = perCommand<string[]>()

/**
 * A clean or smudge filter is a program, and a driver's name is whatever the config says: so every `filter.<name>`
 * the config defines gets its clean, smudge and process blanked (and required off), and every `diff.<name>` its
 * binary flag back to auto (a text file forced to "binary" would be named only). Read once per repository per command.
 */
const driverOverrides = (cwd: string): Promise<string[]> =>
  overridesOnce(cwd, async () => {
    const listing = await collect(cwd, ['config', '-z', '--get-regexp', '^(filter|diff)\\.'], {}, false)
    return overridesFrom(listing.ok ? listing.stdout : '')
  })

function overridesFrom(listing: string): string[] {
  const settings = new Set<string>()
  for (const record of listing.split('\0')) {
    const key = record.split('\n', 1)[0]!
    const [first, last] = [key.indexOf('.'), key.lastIndexOf('.')]
    if (first < 0 || first === last) continue // diff.external, diff.renames: no driver
    // `-c` splits at the first '=': a driver named with one could not be blanked, so git is not run there at all
    if (key.includes('=')) fail('git_error', `the git config names a driver ${JSON.stringify(key)}: not run`, { key })
    const blanks = key.startsWith('filter.') ? ['clean=', 'smudge=', 'process=', 'required=false'] : ['binary=auto']
    for (const blank of blanks) settings.add(`${key.slice(0, last)}.${blank}`)
  }
  return [...settings].flatMap((setting) => ['-c', setting])
}

type GitOptions = Omit<StreamOptions, 'cwd'>

/** git spawned directly (no shell: a call costs one process), hardened; the drivers left out only to list them. */
async function spawnGit(
  cwd: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: GitOptions,
  drivers = true,
): Promise<StreamResult> {
  const blanks = drivers ? await driverOverrides(cwd) : []
  const env = safeEnv(options.env)
  const result = await execStream('git', [...FIXED, ...blanks, ...args], onData, { ...options, cwd, env })
  return result.timedOut ? { ...result, stderr: `timed out after ${options.timeoutMs ?? 60_000} ms` } : result
}

async function collect(cwd: string, args: string[], options: GitOptions, drivers = true): Promise<ExecResult> {
  const chunks: Buffer[] = []
  const { ok, exitCode, stderr } = await spawnGit(cwd, args, (chunk) => chunks.push(chunk) > 0, options, drivers)
  return { ok, exitCode, stdout: Buffer.concat(chunks).toString('utf8'), stderr }
}

/** A hardened git call whose failure the caller reads. */
export const gitTry = (cwd: string, args: string[], options: GitOptions = {}): Promise<ExecResult> =>
  collect(cwd, args, options)

/** A hardened git call: its stdout, or `git_error`. */
export const safeGit = async (cwd: string, args: string[], options: GitOptions = {}): Promise<string> =>
  stdoutOrFail(cwd, args, await collect(cwd, args, options))

/** A hardened git call that converts no content (plainGitStream), whose failure the caller reads. */
export const plainGitTry = (cwd: string, args: string[], options: GitOptions = {}): Promise<ExecResult> =>
  collect(cwd, args, options, false)

/** A hardened git call that converts no content (plainGitStream): its stdout, or `git_error`. */
export const plainGit = async (cwd: string, args: string[], options: GitOptions = {}): Promise<string> =>
  stdoutOrFail(cwd, args, await plainGitTry(cwd, args, options))

function stdoutOrFail(cwd: string, args: string[], result: ExecResult): string {
  if (!result.ok) gitFailed(cwd, args, result, result.stdout)
  return result.stdout
}

/** A hardened git call read as a stream, whose failure the caller reads (`diff --no-index` exits 1 on a difference). */
export const gitStreamTry = (
  cwd: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: GitOptions = {},
): Promise<StreamResult> => spawnGit(cwd, args, onData, options)

/**
 * A hardened git call that converts no content (ls-files, cat-file without --filters, rev-parse): the filter and
 * diff drivers need no blanking, so the config is not listed first (one process fewer). `git_error` on failure.
 */
export const plainGitStream = (
  cwd: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: GitOptions = {},
): Promise<StreamResult> => streamOrFail(cwd, args, onData, options, false)

/** A hardened git call read as a stream (execStream): `git_error` on failure, unless the reader stopped it. */
export const safeGitStream = (
  cwd: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: GitOptions = {},
): Promise<StreamResult> => streamOrFail(cwd, args, onData, options, true)

async function streamOrFail(
  cwd: string,
  args: string[],
  onData: (chunk: Buffer) => boolean,
  options: GitOptions,
  drivers: boolean,
): Promise<StreamResult> {
  const result = await spawnGit(cwd, args, onData, options, drivers)
  if (!result.ok && !result.stopped) gitFailed(cwd, args, result)
  return result
}

/** What commands ask of a repository's layout and HEAD, all answered by one rev-parse (repositoryFacts). */
interface RepositoryFacts {
  topLevel: string
  /** info/exclude as git prints it: relative to the directory asked in, or absolute. */
  excludePath: string
  head: string
  /** The checked-out branch, or `HEAD` when detached (as currentBranch says it). */
  branch: string
  /** The git dir and object format, or null when either is not the plain answer (the snapshot then asks alone). */
  layout: GitLayout | null
}

/** Where the repository's git dir is (absolute) and how it names objects: what a snapshot needs of it. */
export interface GitLayout {
  gitDir: string
  format: 'sha1' | 'sha256'
}

const factsOnce = perCommand<RepositoryFacts | null>()

/**
 * The top level, the exclude file, the git dir and object format, HEAD's commit and its branch in one rev-parse (one
 * process where there were five), once per command. Null when any answer but the layout is not the plain one (no
 * commit yet, HEAD outside refs/heads, a path with a newline, not a repository): each is then asked alone, and git
 * words its own failure as before.
 */
const repositoryFacts = (cwd: string): Promise<RepositoryFacts | null> =>
  factsOnce(cwd, async () => {
    // after `--`, both HEADs are revisions only: a file of that name in the tree is never printed in their place
    const asked = [
      '--show-toplevel',
      '--git-path',
      'info/exclude',
      '--absolute-git-dir',
      '--show-object-format',
      'HEAD^{commit}',
      '--symbolic-full-name',
      'HEAD',
      '--',
    ]
    const result = await plainGitTry(cwd, ['rev-parse', ...asked])
    return result.ok ? factsFrom(result.stdout) : null
  })

/** rev-parse's seven lines read as RepositoryFacts; null for any other output. */
export function factsFrom(printed: string): RepositoryFacts | null {
  const lines = printed.split('\n')
  if (lines.length !== 8 || lines[6] !== '--' || lines[7] !== '') return null
  if (lines.some((line) => line !== line.trim())) return null // each alone is trimmed: asked alone, as it was
  const [topLevel, excludePath, gitDir, format, head, ref] = lines as [string, string, string, string, string, string]
  const branch = ref === 'HEAD' ? 'HEAD' : ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ''
  if (!topLevel || !excludePath || !/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(head) || !branch) return null
  return { topLevel, excludePath, head, branch, layout: layoutFrom(gitDir, format) }
}

/** An absolute git dir and a known object format; null otherwise (a git too old to print the format echoes the flag). */
export function layoutFrom(gitDir: string, format: string): GitLayout | null {
  if (!isAbsolute(gitDir) || (format !== 'sha1' && format !== 'sha256')) return null
  return { gitDir, format }
}

/**
 * The git dir and object format as the command's one rev-parse in `cwd` answered them (with the command's environment:
 * the caller decides whether that answer is the one it would get); null when that call gave none.
 */
export const repositoryLayout = async (cwd: string): Promise<GitLayout | null> =>
  (await repositoryFacts(cwd))?.layout ?? null

export async function topLevel(cwd: string): Promise<string> {
  if (!existsSync(cwd)) fail('git_error', `directory ${cwd} does not exist`, { cwd })
  const facts = await repositoryFacts(cwd)
  if (facts) return realpathSync(facts.topLevel)
  const result = await plainGitTry(cwd, ['rev-parse', '--show-toplevel'])
  if (!result.ok) gitFailed(cwd, ['rev-parse'], { ...result, stderr: result.stderr || 'not a git repository' })
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
  const facts = await repositoryFacts(cwd)
  if (facts) return facts.head
  const result = await plainGitTry(cwd, ['rev-parse', '--verify', 'HEAD^{commit}'])
  return result.ok ? result.stdout.trim() : headFailed(cwd, ['rev-parse', 'HEAD'], result)
}

export async function currentBranch(cwd: string): Promise<string> {
  const facts = await repositoryFacts(cwd)
  if (facts) return facts.branch
  const name = (await plainGit(cwd, ['branch', '--show-current'])).trim()
  return name || 'HEAD'
}

/** How deep pair-loop follows submodules inside submodules. */
export const SUBMODULE_DEPTH = 8

/**
 * The checked-out submodules of `cwd` (gitlinks of its index with a repository in their folder), each with the commit
 * `base` records for it (null: the submodule is new since base). git is never left to look inside them itself
 * (`--ignore-submodules=dirty` everywhere): its own `git status` there would run that repository's configuration.
 */
export async function submodules(cwd: string): Promise<{ path: string }[]> {
  const paths: string[] = []
  const listing = nulRecords((record) => {
    const match = /^160000 [0-9a-f]+ 0\t(.+)$/s.exec(record)
    if (match && existsSync(join(cwd, match[1]!, '.git'))) paths.push(match[1]!)
  })
  await plainGitStream(cwd, ['ls-files', '-z', '--stage'], listing.onData, { timeoutMs: TREE_WALK_TIMEOUT_MS })
  listing.end()
  return paths.map((path) => ({ path }))
}

/** Uncommitted paths, untracked included, and each submodule with changes inside; HANDOFF.md (and a temp file of its write) is pair-loop's own and never counts. */
export async function dirtyPaths(cwd: string, depth = 0): Promise<string[]> {
  const out = await safeGit(cwd, [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=dirty',
  ])
  const paths: string[] = []
  const entries = out.split('\0').filter(Boolean)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const status = entry.slice(0, 2)
    paths.push(entry.slice(3))
    if (status.includes('R') || status.includes('C')) i++ // rename/copy: the next entry is the old path
  }
  if (depth < SUBMODULE_DEPTH)
    for (const sub of await submodules(cwd))
      if (!paths.includes(sub.path) && (await dirtyPaths(join(cwd, sub.path), depth + 1)).length > 0)
        paths.push(sub.path)
  return paths
}

/** The repository's own exclude file (shared by worktrees through the common dir), never a tracked .gitignore. */
export async function excludeFile(cwd: string): Promise<string> {
  const facts = await repositoryFacts(cwd)
  const path = facts ? facts.excludePath : (await plainGit(cwd, ['rev-parse', '--git-path', 'info/exclude'])).trim()
  return isAbsolute(path) ? path : resolve(cwd, path)
}

export async function ensureExcluded(cwd: string, name = HANDOFF_NAME): Promise<string> {
  return excludeIn(await excludeFile(cwd), name)
}

/** `/<name>` in the exclude file `file`, once; the file and its folder made when missing. */
export function excludeIn(file: string, name = HANDOFF_NAME): string {
  const line = `/${name}`
  const current = existsSync(file) ? readFileSync(file, 'utf8') : ''
  if (!current.split(/\r?\n/).includes(line)) {
    mkdirSync(dirname(file), { recursive: true })
    appendFileSync(file, `${current && !current.endsWith('\n') ? '\n' : ''}${line}\n`)
  }
  return file
}
