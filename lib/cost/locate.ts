// Where the agents keep their transcripts, and which of them belong to a repository or a session. Every search
// for transcript files is here; the readers only read the paths found.
import { closeSync, type Dirent, existsSync, openSync, readSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { readJsonRecord, writeFileAtomic } from '../fsutil.ts'
import { cacheDir, pairLoopHome } from '../paths.ts'

export const claudeConfigDir = (env: NodeJS.ProcessEnv = process.env) =>
  (env.CLAUDE_CONFIG_DIR || join(homedir(), '.claude')).normalize('NFC')
export const codexHome = (env: NodeJS.ProcessEnv = process.env) => env.CODEX_HOME || join(homedir(), '.codex')

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
function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

export function claudeProjectDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(claudeConfigDir(env), 'projects', claudeProjectFolder(realPath(repo)))
}

/** `<config>/projects`, and the legacy `$XDG_CONFIG_HOME/claude/projects` some mid-2025 releases used. */
export function claudeProjectRoots(env: NodeJS.ProcessEnv = process.env): string[] {
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

/** Main transcripts (`<session>.jsonl`) of a repository's Claude Code sessions, newest first. */
export function claudeSessions(
  repo: string,
  env: NodeJS.ProcessEnv = process.env,
): Array<{ id: string; path: string; mtimeMs: number }> {
  const dir = claudeProjectDir(repo, env)
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => {
      try {
        const path = join(dir, name)
        return [{ id: name.slice(0, -'.jsonl'.length), path, mtimeMs: statSync(path).mtimeMs }]
      } catch {
        return []
      }
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
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
  const env = options.env ?? process.env
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
  // subagent transcripts live beside the main one, under a folder named like it (e.g. `<session>/subagents/`)
  const subagents = main ? findFiles(main.slice(0, -'.jsonl'.length), 3, (file) => file.endsWith('.jsonl')) : []
  return { session: sessionId, main, subagents: subagents.sort(), looked_in: roots.join(', ') }
}

const isRollout = (name: string) => name.startsWith('rollout-') && name.endsWith('.jsonl')

/** Every Codex rollout file (live and archived). Day folders are local time, so all of them are walked. */
export function codexRollouts(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = codexHome(env)
  const found = findFiles(join(home, 'sessions'), 4, isRollout) // sessions/YYYY/MM/DD/rollout-….jsonl
  return findFiles(join(home, 'archived_sessions'), 1, isRollout, found)
}

/**
 * A thread's rollout. Its path is remembered (cache/codex-rollouts.json), so a cost check does not walk the whole
 * sessions tree for a thread it found before; a remembered path that is gone sends it walking again.
 */
export function codexRolloutForThread(threadId: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
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

/** The first line of a file, read without loading the rest (rollouts start with session_meta). */
export function readFirstLine(path: string, maxBytes = 64 * 1024): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const buffer = Buffer.alloc(maxBytes)
    const read = readSync(fd, buffer, 0, maxBytes, 0)
    const text = buffer.subarray(0, read).toString('utf8')
    const end = text.indexOf('\n')
    return end === -1 ? undefined : text.slice(0, end)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

export interface CodexSessionMeta {
  id: string
  cwd: string | null
  path: string
  mtimeMs: number
  parent: string | null
}

interface SessionMetaPayload {
  id?: unknown
  cwd?: unknown
  forked_from_id?: unknown
  source?: { subagent?: { thread_spawn?: { parent_thread_id?: unknown } } }
}

export function codexSessionMeta(path: string): CodexSessionMeta | undefined {
  const line = readFirstLine(path)
  if (!line) return undefined
  try {
    const parsed = JSON.parse(line) as { type?: string; payload?: SessionMetaPayload }
    const payload = parsed.payload
    if (parsed.type !== 'session_meta' || !payload) return undefined
    const parent = payload.forked_from_id ?? payload.source?.subagent?.thread_spawn?.parent_thread_id
    return {
      id: String(payload.id ?? ''),
      cwd: typeof payload.cwd === 'string' ? payload.cwd : null,
      path,
      mtimeMs: statSync(path).mtimeMs,
      parent: typeof parent === 'string' ? parent : null,
    }
  } catch {
    return undefined
  }
}

/**
 * Codex sessions whose recorded cwd is the repository (or inside it), newest first. With `since` (ms), only rollouts
 * written since then are opened (their first line is what says where the session ran).
 */
export function codexSessions(
  repo: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { since?: number } = {},
): CodexSessionMeta[] {
  const real = realPath(repo)
  const since = options.since
  const found: CodexSessionMeta[] = []
  for (const path of codexRollouts(env)) {
    if (since !== undefined && !(modifiedMs(path) >= since)) continue
    const meta = codexSessionMeta(path)
    if (meta?.cwd && (meta.cwd === real || meta.cwd.startsWith(`${real}/`))) found.push(meta)
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs)
}

/** NaN for a file that is gone. */
function modifiedMs(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return Number.NaN
  }
}

/** The coder's current session: the newest transcript its CLI keeps for this repository that no reviewer ran under. */
export function newestCoderSession(
  coder: 'claude' | 'codex',
  repo: string,
  { env = process.env, skip = new Set<string>() }: { env?: NodeJS.ProcessEnv; skip?: Set<string> } = {},
): string | null {
  const sessions = coder === 'claude' ? claudeSessions(repo, env) : codexSessions(repo, env)
  return sessions.find((session) => !skip.has(session.id))?.id ?? null
}
