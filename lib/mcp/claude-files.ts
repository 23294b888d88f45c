// pair-loop's entries in the person's Claude Code files, every other key kept: the MCP server (user scope, and a file of
// its own for `--strict-mcp-config --mcp-config`), its tools allowed headless, and the settings that keep a sandboxed
// coder from writing $PAIR_LOOP_HOME another way (measured with claude 2.1.197: the Write and Edit tools are not
// sandboxed, and `dangerouslyDisableSandbox` runs a command outside the sandbox unless allowUnsandboxedCommands is false).
import { relative, isAbsolute } from 'node:path'
import { fail } from '../ground/errors.ts'

export interface ServerEntry {
  command: string
  args: readonly string[]
  env: Readonly<Record<string, string>>
}

type Json = Record<string, unknown>

/** The server as Claude Code's `mcpServers` takes it. */
export const claudeServer = (entry: ServerEntry) => ({
  type: 'stdio',
  command: entry.command,
  args: [...entry.args],
  env: { ...entry.env },
})

/** A JSON file's object ('' or none: {}); `config_invalid` naming it when it is not a JSON object. */
export function jsonObject(text: string | undefined, path: string): Json {
  if (text === undefined || text.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    fail('config_invalid', `${path} is not valid JSON (${(error as Error).message}): fix it, then run this again`, {
      path,
    })
  }
  if (!isObject(value))
    fail('config_invalid', `${path} does not hold a JSON object: fix it, then run this again`, { path })
  return value
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `config` with `mcpServers["pair-loop"]` set (user scope, ~/.claude.json, or an --mcp-config file). */
export function withServer(config: Json, name: string, entry: ServerEntry, path: string): Json {
  const servers = config.mcpServers ?? {}
  if (!isObject(servers)) fail('config_invalid', `${path}: "mcpServers" is not an object`, { path })
  return { ...config, mcpServers: { ...servers, [name]: claudeServer(entry) } }
}

/** `settings` with pair-loop's tools allowed, Write/Edit of the home denied, and no command outside the sandbox. */
export function withSettings(
  settings: Json,
  tools: readonly string[],
  home: string,
  userHome: string,
  path: string,
): Json {
  const permissions = settings.permissions ?? {}
  const sandbox = settings.sandbox ?? {}
  if (!isObject(permissions)) fail('config_invalid', `${path}: "permissions" is not an object`, { path })
  if (!isObject(sandbox)) fail('config_invalid', `${path}: "sandbox" is not an object`, { path })
  const rule = homeRule(home, userHome)
  return {
    ...settings,
    permissions: {
      ...permissions,
      allow: withAll(permissions.allow, tools, path, 'permissions.allow'),
      deny: withAll(permissions.deny, [`Write(${rule})`, `Edit(${rule})`], path, 'permissions.deny'),
    },
    sandbox: { ...sandbox, allowUnsandboxedCommands: false },
  }
}

/** A list with `more` added once each, its own entries kept in their order. */
function withAll(list: unknown, more: readonly string[], path: string, key: string): unknown[] {
  if (list !== undefined && !Array.isArray(list)) fail('config_invalid', `${path}: "${key}" is not a list`, { path })
  const own = (list as unknown[] | undefined) ?? []
  return [...own, ...more.filter((item) => !own.includes(item))]
}

/** The home's files as a Claude Code path rule: `~/…` under the person's home, `//abs/…` elsewhere. */
export function homeRule(home: string, userHome: string): string {
  const inside = relative(userHome, home)
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? `~/${inside}/**` : `/${home}/**`
}
