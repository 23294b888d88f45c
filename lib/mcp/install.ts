// installMcpEntries: `pair-loop mcp` written into the person's own CLI configs (what `pair-loop setup` calls, and
// `pair-loop mcp --install`), idempotently, every other key of those files kept. Codex: [mcp_servers.pair-loop] in
// config.toml with each tool approved for headless calls. Claude Code: the server in user scope and in a file for
// `--strict-mcp-config --mcp-config`, its tools in permissions.allow, Write/Edit of the home denied, no unsandboxed
// commands. A PAIR_LOOP_HOME in a temp folder is refused: the Codex sandbox lets the coder write /tmp.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, join, relative, isAbsolute, resolve } from 'node:path'
import { type Context, tempRoot, userHome } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { ioFailure, writeFileAtomic } from '../ground/fsutil.ts'
import { jsonObject, type ServerEntry, withServer, withSettings } from './claude-files.ts'
import { withCodexEntry } from './codex-toml.ts'
import { claudeToolName, SERVER_NAME, TOOLS } from './tools.ts'

export type McpAgent = 'claude' | 'codex'

export interface McpInstallRequest {
  /** The program the CLIs start, absolute, and its arguments (ending in `mcp`). */
  command: string
  args: readonly string[]
  /** The $PAIR_LOOP_HOME the server works in (absolute). */
  pairLoopHome: string
  /** Which CLIs to configure. */
  agents: readonly McpAgent[]
  /** Where each CLI's files are (default: from the person's environment, see mcpPaths). */
  paths: McpPaths
  /** A test's home may be in a temp folder; a person's never. */
  test?: boolean
  /** The temp folders a home may not be in (default /tmp, /var/tmp, /dev/shm and $TMPDIR). */
  tempRoots: readonly string[]
}

export interface McpPaths {
  userHome: string
  /** ~/.codex/config.toml (or $CODEX_HOME's). */
  codexConfig: string
  /** ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json): Claude Code's user scope. */
  claudeUserConfig: string
  /** ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR's). */
  claudeSettings: string
  /** The file for `claude --strict-mcp-config --mcp-config <it>`: in the home, which the coder cannot write. */
  claudeMcpConfig: string
}

export interface McpInstallResult {
  server: string
  tools: string[]
  files: { agent: McpAgent; path: string; changed: boolean }[]
  changed: boolean
}

/** The person's CLI files, from the environment of the person's command (`setup`, `mcp --install`). */
export function mcpPaths(env: Readonly<NodeJS.ProcessEnv>, pairLoopHome: string): McpPaths {
  const home = userHome(env)
  const claudeDir = env.CLAUDE_CONFIG_DIR || join(home, '.claude')
  return {
    userHome: home,
    codexConfig: join(env.CODEX_HOME || join(home, '.codex'), 'config.toml'),
    claudeUserConfig: env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, '.claude.json') : join(home, '.claude.json'),
    claudeSettings: join(claudeDir, 'settings.json'),
    claudeMcpConfig: join(pairLoopHome, 'claude-mcp.json'),
  }
}

/** The temp folders of a Context's world. */
export const tempRootsOf = (ctx: Pick<Context, 'env'>): string[] => ['/tmp', '/var/tmp', '/dev/shm', tempRoot(ctx.env)]

/** Write or update pair-loop's MCP entries for the CLIs asked; each file written only when its content changes. */
export function installMcpEntries(request: McpInstallRequest): McpInstallResult {
  checkHome(request)
  const entry: ServerEntry = {
    command: request.command,
    args: request.args,
    env: { PAIR_LOOP_HOME: request.pairLoopHome },
  }
  const tools = Object.keys(TOOLS)
  const { paths } = request
  const files: McpInstallResult['files'] = []
  const edit = (agent: McpAgent, path: string, change: (text: string | undefined) => string) => {
    const before = readText(path)
    const after = change(before)
    if (after !== before) write(path, after)
    files.push({ agent, path, changed: after !== before })
  }
  if (request.agents.includes('codex'))
    edit('codex', paths.codexConfig, (text) =>
      withCodexEntry(text ?? '', { ...entry, tools, toolTimeoutS: 300 }, paths.codexConfig),
    )
  if (request.agents.includes('claude')) {
    const server = (path: string) => (text: string | undefined) =>
      json(withServer(jsonObject(text, path), SERVER_NAME, entry, path), text)
    edit('claude', paths.claudeMcpConfig, server(paths.claudeMcpConfig))
    edit('claude', paths.claudeUserConfig, server(paths.claudeUserConfig))
    edit('claude', paths.claudeSettings, (text) =>
      json(
        withSettings(
          jsonObject(text, paths.claudeSettings),
          tools.map(claudeToolName),
          request.pairLoopHome,
          paths.userHome,
          paths.claudeSettings,
        ),
        text,
      ),
    )
  }
  return { server: SERVER_NAME, tools, files, changed: files.some((file) => file.changed) }
}

/** JSON as the file had it when nothing changed (so a rerun writes nothing), else two-space indented. */
const json = (value: unknown, before: string | undefined) =>
  before !== undefined && isSameJson(before, value) ? before : `${JSON.stringify(value, null, 2)}\n`

function isSameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value)
  } catch {
    return false
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    return ioFailure(path, error, 'read')
  }
}

/** Atomically, keeping the file's mode (a new one is the person's alone). */
function write(path: string, text: string): void {
  const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o600
  try {
    writeFileAtomic(path, text, mode)
  } catch (error) {
    ioFailure(path, error)
  }
}

/** An absolute home outside every temp folder (as the filesystem resolves it), unless this is a test's. */
function checkHome({ pairLoopHome, test, tempRoots }: McpInstallRequest): void {
  if (!isAbsolute(pairLoopHome)) fail('usage', `PAIR_LOOP_HOME must be absolute, got ${pairLoopHome}`)
  if (test) return
  const real = realOrNearest(pairLoopHome)
  const root = tempRoots.map(realOrNearest).find((temp) => isInside(real, temp))
  if (root)
    fail(
      'usage',
      `PAIR_LOOP_HOME=${pairLoopHome} is in ${root}, a temp folder the Codex sandbox lets the coder write: set PAIR_LOOP_HOME to a folder in your home (default ~/.pair-loop)`,
      { path: pairLoopHome },
    )
}

const isInside = (path: string, dir: string) => {
  const rel = relative(dir, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/** The path with its nearest existing ancestor's symlinks resolved. */
function realOrNearest(path: string): string {
  let dir = resolve(path)
  const rest: string[] = []
  for (;;) {
    try {
      return join(realpathSync(dir), ...rest.reverse())
    } catch {
      const parent = dirname(dir)
      if (parent === dir) return resolve(path)
      rest.push(dir.slice(parent.length).replace(/^\//, ''))
      dir = parent
    }
  }
}
