// Gemini CLI session files: where they are and the usage they record (docs/reference/gemini-cli.md).
// `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<project slug>/chats/session-<yyyy-mm-ddThh-mm>-<id8>.jsonl`; a subagent's
// file is `chats/<parent session id>/<its id>.jsonl`. A file is an append log: a message is written again whole each
// time it changes (tokens added, tool calls added; a resume may replay them all), so a message counts once, by id,
// as its last record says.
import { type Dirent, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { context, userHome } from '../ground/context.ts'
import { readFileHead } from '../ground/fsutil.ts'
import type { Loose } from './line-reader.ts'

/** One model response as the session file records it (counts as the Gemini API's usageMetadata gave them). */
export interface GeminiResponse {
  id: string
  timestamp: number
  model: string | null
  /** promptTokenCount: cached included. */
  prompt: number
  cached: number
  /** candidatesTokenCount: thoughts not included. */
  candidates: number
  thoughts: number
  /** toolUsePromptTokenCount: billed as input beside the prompt. */
  tool: number
}

/** `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (the CLI reads GEMINI_CLI_HOME as its home, not as the folder). */
export const geminiDir = (env: NodeJS.ProcessEnv = context().env) =>
  join(env.GEMINI_CLI_HOME || userHome(env), '.gemini')

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

/** The first line's sessionId (the file's metadata record, a few hundred bytes), or null; a FIFO or link is not read. */
export function geminiSessionIdOf(path: string): string | null {
  try {
    const text = readFileHead(path, 64 * 1024)?.toString('utf8') ?? ''
    const end = text.indexOf('\n')
    const first = JSON.parse(end < 0 ? text : text.slice(0, end))
    return typeof first?.sessionId === 'string' ? first.sessionId : null
  } catch {
    return null
  }
}

/**
 * The session's files and its subagents' files. The name carries only 8 characters of the id: a file counts when its
 * first record names the whole id. A session may have several: `--resume` first starts a file of its own (holding
 * only the session context, no response) before it appends to the resumed one.
 */
export function geminiSessionFiles(
  sessionId: string,
  env: NodeJS.ProcessEnv = context().env,
): { files: string[]; subagents: string[] } {
  const tmp = join(geminiDir(env), 'tmp')
  const suffix = `-${sessionId.slice(0, 8)}.jsonl`
  const out = { files: [] as string[], subagents: [] as string[] }
  for (const project of entries(tmp)) {
    if (!project.isDirectory()) continue
    const chats = join(tmp, project.name, 'chats')
    for (const file of entries(chats)) {
      const path = join(chats, file.name)
      if (!file.isFile() || !file.name.startsWith('session-') || !file.name.endsWith(suffix)) continue
      if (geminiSessionIdOf(path) === sessionId) out.files.push(path)
    }
    if (!out.files.length) continue
    for (const sub of entries(join(chats, sessionId)))
      if (sub.isFile() && sub.name.endsWith('.jsonl')) out.subagents.push(join(chats, sessionId, sub.name))
  }
  return out
}

const count = (n: unknown): number | null => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null)

/**
 * A message record with usage; null for records without (user messages, metadata, updates); a string naming the
 * field that is wrong in a `gemini` message that carries usage.
 */
export function geminiMessage(record: Loose): GeminiResponse | string | null {
  if (record?.type !== 'gemini' || record.tokens === undefined || record.tokens === null) return null
  const t = record.tokens
  if (typeof record.id !== 'string' || !record.id) return 'id'
  if (typeof t !== 'object') return 'tokens'
  const [prompt, cached, candidates] = [count(t.input), count(t.cached ?? 0), count(t.output)]
  const [thoughts, tool] = [count(t.thoughts ?? 0), count(t.tool ?? 0)]
  if (prompt === null || cached === null || candidates === null || thoughts === null || tool === null) return 'tokens'
  const timestamp = typeof record.timestamp === 'string' ? Date.parse(record.timestamp) : Number.NaN
  const model = typeof record.model === 'string' && record.model ? record.model : null
  return { id: record.id, timestamp, model, prompt, cached: Math.min(cached, prompt), candidates, thoughts, tool }
}

/** Every response a session file records, once each (its last record), in the order they first appeared. */
export function readGeminiSession(path: string): GeminiResponse[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return []
  }
  const byId = new Map<string, GeminiResponse>()
  const keep = (record: Loose) => {
    const found = geminiMessage(record)
    if (found && typeof found === 'object') byId.set(found.id, found)
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"tokens"')) continue // only gemini messages with usage matter
    let record: Loose
    try {
      record = JSON.parse(line)
    } catch {
      continue // a line still being written, or not JSON: counts as nothing
    }
    keep(record)
    // a `$set` of the message list (a rewrite of the history) carries messages inside
    const nested = record?.$set?.messages
    if (Array.isArray(nested)) nested.forEach(keep)
  }
  return [...byId.values()]
}
