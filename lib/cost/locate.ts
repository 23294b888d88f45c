// Where the agents keep their transcripts, and which of them belong to a repository.
import { closeSync, openSync, readSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

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

export function claudeProjectDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  let real = repo
  try {
    real = realpathSync(repo)
  } catch {}
  return join(claudeConfigDir(env), 'projects', claudeProjectFolder(real))
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

/** Every Codex rollout file (live and archived). Day folders are local time, so all of them are walked. */
export function codexRollouts(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = codexHome(env)
  const found: string[] = []
  const walk = (dir: string, depth: number) => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (entry.isDirectory() && depth < 4) walk(path, depth + 1)
      else if (entry.isFile() && entry.name.startsWith('rollout-') && entry.name.endsWith('.jsonl')) found.push(path)
    }
  }
  walk(join(home, 'sessions'), 0)
  walk(join(home, 'archived_sessions'), 3)
  return found
}

export function codexRolloutForThread(threadId: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return codexRollouts(env).find((path) => path.endsWith(`-${threadId}.jsonl`))
}

/** The first line of a file, read without loading the rest (rollouts start with session_meta). */
export function firstLine(path: string, maxBytes = 64 * 1024): string | undefined {
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

export function codexSessionMeta(path: string): CodexSessionMeta | undefined {
  const line = firstLine(path)
  if (!line) return undefined
  try {
    const parsed = JSON.parse(line) as { type?: string; payload?: Record<string, unknown> }
    if (parsed.type !== 'session_meta' || !parsed.payload) return undefined
    const payload = parsed.payload as {
      id?: unknown
      cwd?: unknown
      forked_from_id?: unknown
      source?: { subagent?: { thread_spawn?: { parent_thread_id?: unknown } } }
    }
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

/** Codex sessions whose recorded cwd is the repository (or inside it), newest first. */
export function codexSessions(repo: string, env: NodeJS.ProcessEnv = process.env): CodexSessionMeta[] {
  let real = repo
  try {
    real = realpathSync(repo)
  } catch {}
  return codexRollouts(env)
    .flatMap((path) => {
      const meta = codexSessionMeta(path)
      return meta?.cwd && (meta.cwd === real || meta.cwd.startsWith(`${real}/`)) ? [meta] : []
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
}

/** The coder's current session: the newest transcript its CLI keeps for this repository. */
export function newestCoderSession(
  coder: 'claude' | 'codex',
  repo: string,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  if (coder === 'claude') return claudeSessions(repo, env)[0]?.id ?? null
  return codexSessions(repo, env)[0]?.id ?? null
}
