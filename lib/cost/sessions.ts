// Which transcripts belong to a repository: the Claude Code sessions in its project folders (the top level's and any
// folder's below it, confirmed by the `cwd` the lines record), the Codex rollouts whose recorded cwd is in it, and the
// Gemini CLI sessions whose project root is in it.
// Where the folders are is locate.ts's; which of them is the coder's, coder.ts's.
import { closeSync, type Dirent, lstatSync, openSync, readSync, readdirSync, type Stats, statSync } from 'node:fs'
import { join } from 'node:path'
import { claudeProjectFolder, claudeProjectRoots, codexRollouts, realPath } from '../agents/locate.ts'
import { context } from '../ground/context.ts'
import { readFileHead } from '../ground/fsutil.ts'
import { geminiDir, geminiSessionIdOf } from './gemini-transcript.ts'

/** Whether a recorded `cwd` is the repository's top level (its real path) or a folder below it. */
export function withinRepo(cwd: string, top: string): boolean {
  return cwd === top || cwd.startsWith(top.endsWith('/') ? top : `${top}/`)
}

/** When a file last changed: its ctime counts too (a user can set a file's mtime back, not its ctime). */
export const changedMs = (st: Stats) => Math.max(st.mtimeMs, st.ctimeMs)

/**
 * The project folders that may hold the repository's Claude Code sessions: the top level's own (`own`), and every
 * folder whose name starts with the top level's name (cut where Claude Code cuts long names) and '-': a folder below
 * the top level, or a sibling whose path maps to the same prefix (the mapping is lossy: the transcripts' `cwd` says).
 */
export function claudeRepoFolders(
  repo: string,
  env: NodeJS.ProcessEnv = context().env,
): Array<{ dir: string; own: boolean }> {
  const top = realPath(repo)
  const own = claudeProjectFolder(top)
  const prefix = `${top.replace(/[^A-Za-z0-9]/g, '-').slice(0, 200)}-`
  const folders: Array<{ dir: string; own: boolean }> = []
  for (const root of claudeProjectRoots(env)) {
    folders.push({ dir: join(root, own), own: true })
    let entries: Dirent[]
    try {
      entries = readdirSync(root, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      if (entry.name !== own && entry.name.startsWith(prefix) && entry.isDirectory())
        folders.push({ dir: join(root, entry.name), own: false })
    }
  }
  return folders
}

/** The first `cwd` a transcript records (in its first 256 KiB), or null. */
export function recordedCwd(path: string, maxBytes = 256 * 1024): string | null {
  const head = readHead(path, maxBytes)
  if (!head) return null
  const lines = head.split('\n')
  lines.pop() // an unfinished line
  for (const line of lines) {
    if (!line.includes('"cwd"')) continue
    try {
      const cwd = (JSON.parse(line) as { cwd?: unknown }).cwd
      if (typeof cwd === 'string') return cwd
    } catch {}
  }
  return null
}

export interface ClaudeSession {
  id: string
  path: string
  mtimeMs: number
}

/**
 * The repository's Claude Code sessions (main transcripts `<session>.jsonl`), newest first: those in the top level's
 * own folder, and those in a candidate folder whose recorded `cwd` is the top level or under it. With `since` (ms),
 * only transcripts changed since then.
 */
export function claudeSessions(
  repo: string,
  env: NodeJS.ProcessEnv = context().env,
  options: { since?: number } = {},
): ClaudeSession[] {
  const top = realPath(repo)
  const found = new Map<string, ClaudeSession>()
  for (const folder of claudeRepoFolders(repo, env)) {
    let names: string[]
    try {
      names = readdirSync(folder.dir)
    } catch {
      continue
    }
    for (const name of names) {
      const id = name.slice(0, -'.jsonl'.length)
      if (!name.endsWith('.jsonl') || found.has(id)) continue
      const path = join(folder.dir, name)
      let st: Stats
      try {
        st = lstatSync(path)
      } catch {
        continue
      }
      if (!st.isFile() || (options.since !== undefined && !(changedMs(st) >= options.since))) continue
      // another folder's name may be a sibling's (`app-v2` for `app`): the cwd its lines record says whose it is
      const cwd = folder.own ? top : recordedCwd(path)
      if (cwd !== null && withinRepo(cwd, top)) found.set(id, { id, path, mtimeMs: st.mtimeMs })
    }
  }
  return [...found.values()].sort((a, b) => b.mtimeMs - a.mtimeMs)
}

/** The first `maxBytes` of a file, as text, or undefined when it cannot be read. */
function readHead(path: string, maxBytes: number): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const buffer = Buffer.alloc(maxBytes)
    const read = readSync(fd, buffer, 0, maxBytes, 0)
    return buffer.subarray(0, read).toString('utf8')
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The first line of a file, read without loading the rest (rollouts start with session_meta). */
export function readFirstLine(path: string, maxBytes = 64 * 1024): string | undefined {
  const text = readHead(path, maxBytes)
  const end = text?.indexOf('\n') ?? -1
  return end === -1 ? undefined : text!.slice(0, end)
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
 * changed since then (ctime too) are opened (their first line is what says where the session ran).
 */
export function codexSessions(
  repo: string,
  env: NodeJS.ProcessEnv = context().env,
  options: { since?: number } = {},
): CodexSessionMeta[] {
  const real = realPath(repo)
  const since = options.since
  const found: CodexSessionMeta[] = []
  for (const path of codexRollouts(env)) {
    if (since !== undefined && !(changedAt(path) >= since)) continue
    const meta = codexSessionMeta(path)
    if (meta?.cwd && withinRepo(meta.cwd, real)) found.push(meta)
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs)
}

/** NaN for a file that is gone. */
function changedAt(path: string): number {
  try {
    return changedMs(statSync(path))
  } catch {
    return Number.NaN
  }
}

export interface GeminiSession {
  id: string
  /** The session's newest file in the repository's project folders. */
  path: string
  mtimeMs: number
}

/**
 * Gemini CLI sessions whose project root (`<slug>/.project_root`: the folder it ran in) is the repository's top level
 * or a folder below it, newest first. With `since` (ms), only session files changed since then are opened (their first
 * record names the session). A session may have several files (a resume starts one): its newest stands for it.
 */
export function geminiSessions(
  repo: string,
  env: NodeJS.ProcessEnv = context().env,
  options: { since?: number } = {},
): GeminiSession[] {
  const top = realPath(repo)
  const tmp = join(geminiDir(env), 'tmp')
  const found = new Map<string, GeminiSession>()
  for (const project of dirents(tmp)) {
    const root = project.isDirectory() ? projectRoot(join(tmp, project.name)) : null
    if (root === null || !(withinRepo(root, top) || withinRepo(realPath(root), top))) continue
    const chats = join(tmp, project.name, 'chats')
    for (const file of dirents(chats)) {
      if (!file.isFile() || !file.name.startsWith('session-') || !file.name.endsWith('.jsonl')) continue
      const path = join(chats, file.name)
      const mtimeMs = changedAt(path)
      if (options.since !== undefined && !(mtimeMs >= options.since)) continue
      const id = geminiSessionIdOf(path)
      const known = id === null ? undefined : found.get(id)
      if (id !== null && !(known && known.mtimeMs >= mtimeMs)) found.set(id, { id, path, mtimeMs })
    }
  }
  return [...found.values()].sort((a, b) => b.mtimeMs - a.mtimeMs)
}

/** The project root a Gemini project folder's `.project_root` names (a regular file, a path), or null. */
function projectRoot(folder: string): string | null {
  try {
    const text = readFileHead(join(folder, '.project_root'), 8192)?.toString('utf8').trim()
    return text?.startsWith('/') ? text : null
  } catch {
    return null
  }
}

function dirents(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
}
