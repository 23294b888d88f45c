// pair-loop's entry in the person's ~/.codex/config.toml, edited as text so every other line (comments, order,
// spacing) stays as the person wrote it: the tables under [mcp_servers.pair-loop] are removed and written anew at the
// end. Then the file is parsed before and after (smol-toml): everything but pair-loop's entry must be the same, or the
// file is left alone and the person is told why.
import { parse, stringify } from 'smol-toml'
import { fail } from '../ground/errors.ts'

export interface CodexEntry {
  command: string
  args: readonly string[]
  env: Readonly<Record<string, string>>
  /** Every tool, each approved for a headless call (`approval_mode = "approve"`, measured with codex exec 0.171). */
  tools: readonly string[]
  /** Seconds a call may take: a review waits up to review_wait_s (100 by default) before saying it is in flight. */
  toolTimeoutS: number
}

const SERVER = 'pair-loop'

/** `text` (a config.toml's, '' when there is none) with pair-loop's entry written; `config_invalid` when unsafe. */
export function withCodexEntry(text: string, entry: CodexEntry, path: string): string {
  const before = parsed(text, path)
  const lines = text.split('\n')
  const kept: string[] = []
  let owned = false
  for (const line of lines) {
    const header = tableHeader(line)
    if (header) owned = header[0] === 'mcp_servers' && header[1] === SERVER
    if (!owned) kept.push(line)
  }
  while (kept.length && kept.at(-1)!.trim() === '') kept.pop()
  const result = `${kept.length ? `${kept.join('\n')}\n\n` : ''}${entryText(entry)}`
  const after = parsed(result, path)
  if (canonical(withoutEntry(before)) !== canonical(withoutEntry(after)))
    fail('config_invalid', `cannot edit ${path} safely: write [mcp_servers.${SERVER}] only as tables of their own`, {
      path,
    })
  return result
}

function parsed(text: string, path: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>
  } catch (error) {
    const why = (error as Error).message.split('\n')[0]
    return fail('config_invalid', `${path} is not valid TOML (${why}): fix it, then run this again`, { path })
  }
}

function withoutEntry(config: Record<string, unknown>): Record<string, unknown> {
  const servers = config.mcp_servers
  if (!servers || typeof servers !== 'object') return config
  const { [SERVER]: _, ...others } = servers as Record<string, unknown>
  const rest = { ...config }
  if (Object.keys(others).length) rest.mcp_servers = others
  else delete rest.mcp_servers
  return rest
}

/** A parsed TOML value as JSON with its keys sorted: two files that mean the same give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner) =>
    inner && typeof inner === 'object' && !Array.isArray(inner) && !(inner instanceof Date)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  )
}

/** The entry's tables, in TOML. */
function entryText(entry: CodexEntry): string {
  const server = {
    command: entry.command,
    args: [...entry.args],
    tool_timeout_sec: entry.toolTimeoutS,
    env: { ...entry.env },
    tools: Object.fromEntries(entry.tools.map((tool) => [tool, { approval_mode: 'approve' }])),
  }
  // the note inside pair-loop's first table: a rerun removes it with the table
  const [header, ...rest] = stringify({ mcp_servers: { [SERVER]: server } }).split('\n')
  const note =
    '# written by pair-loop (`pair-loop mcp --install`): the loop for a sandboxed coder; run it again to update'
  return `${[header, note, ...rest].join('\n')}\n`
}

/** The key path of a table header line (`[a.b]`, `[[a.b]]`), or undefined for any other line. */
export function tableHeader(line: string): string[] | undefined {
  const match = /^\s*\[\[?(.*?)\]\]?\s*(#.*)?$/.exec(line)
  if (!match) return undefined
  const keys: string[] = []
  const part = /\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)"|'([^']*)')\s*(\.|$)/y
  const body = match[1]!
  let at = 0
  while (at < body.length) {
    part.lastIndex = at
    const found = part.exec(body)
    if (!found) return undefined
    keys.push(found[1] ?? (found[2] !== undefined ? JSON.parse(`"${found[2]}"`) : found[3]!))
    at = part.lastIndex
    if (found[4] === '') break
  }
  return keys.length ? keys : undefined
}
