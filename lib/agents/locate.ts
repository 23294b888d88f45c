// Where the agents keep their transcripts: the config folders, Claude Code's project folder names, a session's files,
// Codex rollouts (all, or a thread's). Which of them belong to a repository is sessions.ts's; the readers only read
// the paths found.
import { type Dirent, existsSync, readdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { readJsonRecord, writeFileAtomic } from '../ground/fsutil.ts'
import { cacheDir, pairLoopHome } from '../ground/paths.ts'
import { context, userHome } from '../ground/context.ts'

/** `env`'s home (a frozen run's HOME, see transcript-env.ts), else the OS's. */
const homeOf = (env: NodeJS.ProcessEnv) => userHome(env)
export const claudeConfigDir = (env: NodeJS.ProcessEnv = context().env) =>
  (env.CLAUDE_CONFIG_DIR || join(homeOf(env), '.claude')).normalize('NFC')
export const codexHome = (env: NodeJS.ProcessEnv = context().env) => env.CODEX_HOME || join(homeOf(env), '.codex')

/** Java's String.hashCode over UTF-16 code units, as Claude Code uses for long folder names. */
function javaHash(text: string): number {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0
  return hash
}

/** Claude Code's folder for a working directory: every non-alphanumeric UTF-16 unit becomes '-', long names hashed. */
export function claudeProjectFolder(realCwd: string): string {
  const name = realCwd.replace(/[^A-Za-z0-9]/g, '-')
  if (name.length <= 200) return name
  return `${name.slice(0, 200)}-${Math.abs(javaHash(realCwd)).toString(36)}`
}

/** The path itself when it cannot be resolved (a repository moved or deleted since the run started). */
export function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

export function claudeProjectDir(repo: string, env: NodeJS.ProcessEnv = context().env): string {
  return join(claudeConfigDir(env), 'projects', claudeProjectFolder(realPath(repo)))
}

/** `<config>/projects`, and the legacy `$XDG_CONFIG_HOME/claude/projects` some mid-2025 releases used. */
export function claudeProjectRoots(env: NodeJS.ProcessEnv = context().env): string[] {
  const roots = [join(claudeConfigDir(env), 'projects')]
  if (!env.CLAUDE_CONFIG_DIR && env.HOME)
    roots.push(join(env.XDG_CONFIG_HOME || join(env.HOME, '.config'), 'claude', 'projects'))
  return roots
}

/** Files under `dir` (and up to `levels` folders below it) whose name `wanted` accepts, in directory order. */
function findFiles(dir: string, levels: number, wanted: (name: string) => boolean, into: string[] = []): string[] {
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return into
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory() && levels > 0) findFiles(path, levels - 1, wanted, into)
    else if (entry.isFile() && wanted(entry.name)) into.push(path)
  }
  return into
}

/** The files of one Claude Code session: the main transcript (in any project folder) and its subagents'. */
export interface SessionFiles {
  session: string
  main: string | null
  subagents: string[]
  looked_in: string
}

/** A session's files: its main transcript, looked for in the repository's folder first, then in every project folder. */
export function claudeSessionFiles(
  sessionId: string,
  options: { repo?: string; env?: NodeJS.ProcessEnv } = {},
): SessionFiles {
  const env = options.env ?? context().env
  const name = `${sessionId}.jsonl`
  const roots = claudeProjectRoots(env)
  let main: string | null = null
  if (options.repo) {
    const here = join(claudeProjectDir(options.repo, env), name)
    if (existsSync(here)) main = here
  }
  for (const root of roots) {
    if (main) break
    let folders: string[]
    try {
      folders = readdirSync(root)
    } catch {
      continue
    }
    for (const folder of folders.sort()) {
      const candidate = join(root, folder, name)
      if (existsSync(candidate)) {
        main = candidate
        break
      }
    }
  }
  return { session: sessionId, main, subagents: main ? subagentFiles(main) : [], looked_in: roots.join(', ') }
}

/** A session's subagent transcripts: beside its main one, under a folder named like it (`<session>/subagents/`). */
export function subagentFiles(main: string): string[] {
  return findFiles(main.slice(0, -'.jsonl'.length), 3, (file) => file.endsWith('.jsonl')).sort()
}

const isRollout = (name: string) => name.startsWith('rollout-') && name.endsWith('.jsonl')

/** Every Codex rollout file (live and archived). Day folders are local time, so all of them are walked. */
export function codexRollouts(env: NodeJS.ProcessEnv = context().env): string[] {
  const home = codexHome(env)
  const found = findFiles(join(home, 'sessions'), 4, isRollout) // sessions/YYYY/MM/DD/rollout-….jsonl
  return findFiles(join(home, 'archived_sessions'), 1, isRollout, found)
}

/**
 * A thread's rollout. Its path is remembered (cache/codex-rollouts.json), so a cost check does not walk the whole
 * sessions tree for a thread it found before; a remembered path that is gone sends it walking again.
 */
export function codexRolloutForThread(threadId: string, env: NodeJS.ProcessEnv = context().env): string | undefined {
  const file = join(cacheDir(pairLoopHome(env)), 'codex-rollouts.json')
  const known = readJsonRecord(file, (value): value is string => typeof value === 'string')
  const remembered = known[threadId]
  if (remembered?.endsWith(`-${threadId}.jsonl`) && existsSync(remembered)) return remembered
  const found: Record<string, string> = {}
  const all = codexRollouts(env)
  for (const path of all) {
    const id = ROLLOUT_THREAD.exec(path)?.[1]
    if (id) found[id] = path
  }
  try {
    writeFileAtomic(file, JSON.stringify(found), 0o600, { durable: false })
  } catch {} // only a speed-up
  return found[threadId] ?? all.find((path) => path.endsWith(`-${threadId}.jsonl`))
}

const ROLLOUT_THREAD = /-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/
