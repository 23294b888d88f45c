// installMcpEntries (`pair-loop mcp --install`, and `pair-loop setup`): pair-loop's MCP entries in the person's Codex
// and Claude Code files, every other key and comment kept, idempotent, a temp-folder home refused.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parse } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { isPairLoopError } from '../lib/ground/errors.ts'
import { installMcpEntries, type McpInstallRequest, mcpPaths } from '../lib/mcp/install.ts'
import { tableHeader } from '../lib/mcp/codex-toml.ts'
import { TOOLS } from '../lib/mcp/tools.ts'
import { isolatedEnv, runCli, tempDir } from './_helpers.ts'

const TOOL_NAMES = Object.keys(TOOLS)

/** A person's request with every file in a fresh fake home (a test's home: in the temp folder). */
function request(overrides: Partial<McpInstallRequest> = {}): McpInstallRequest {
  const env = isolatedEnv()
  return {
    command: '/usr/bin/node',
    args: ['/opt/pair-loop/bin/pair-loop.cjs', 'mcp'],
    pairLoopHome: env.PAIR_LOOP_HOME,
    agents: ['claude', 'codex'],
    paths: mcpPaths(env, env.PAIR_LOOP_HOME),
    test: true,
    tempRoots: ['/tmp'],
    ...overrides,
  }
}

const put = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}
const read = (path: string) => readFileSync(path, 'utf8')
const json = (path: string) => JSON.parse(read(path))

const PERSONS_TOML = `# my codex settings
model = "gpt-5.5" # the one I like

[mcp_servers.other]
command = "other-server"
args = ["--flag"]

[projects."/home/me/proj"]
trust_level = "untrusted"

[mcp_servers.pair-loop]
command = "an-old-pair-loop"

[mcp_servers.pair-loop.tools.gone]
approval_mode = "approve"

[features]
plugins = false
`

describe('installMcpEntries: Codex', () => {
  it('writes [mcp_servers.pair-loop] with the home in its env and every tool approved for headless calls', () => {
    const req = request()
    installMcpEntries(req)
    const server = (parse(read(req.paths.codexConfig)) as any).mcp_servers['pair-loop']
    expect(server).toMatchObject({ command: '/usr/bin/node', args: ['/opt/pair-loop/bin/pair-loop.cjs', 'mcp'] })
    expect(server.env).toEqual({ PAIR_LOOP_HOME: req.pairLoopHome })
    expect(Object.keys(server.tools).sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of TOOL_NAMES) expect(server.tools[tool]).toEqual({ approval_mode: 'approve' })
  })

  it("keeps every other key, comment and table of the person's file, and replaces an old pair-loop entry whole", () => {
    const req = request()
    put(req.paths.codexConfig, PERSONS_TOML)
    installMcpEntries(req)
    const text = read(req.paths.codexConfig)
    const config = parse(text) as any
    expect(text).toContain('# my codex settings\nmodel = "gpt-5.5" # the one I like')
    expect(config.mcp_servers.other).toEqual({ command: 'other-server', args: ['--flag'] })
    expect(config.projects['/home/me/proj']).toEqual({ trust_level: 'untrusted' })
    expect(config.features).toEqual({ plugins: false })
    expect(config.model).toBe('gpt-5.5')
    expect(config.mcp_servers['pair-loop'].command).toBe('/usr/bin/node')
    expect(config.mcp_servers['pair-loop'].tools.gone).toBeUndefined()
  })

  it('refuses a file that is not TOML, or that defines pair-loop inline, as config_invalid, leaving it as it was', () => {
    for (const text of ['model = \n', '[mcp_servers]\n"pair-loop" = { command = "x" }\n']) {
      const req = request({ agents: ['codex'] })
      put(req.paths.codexConfig, text)
      let caught: unknown
      try {
        installMcpEntries(req)
      } catch (error) {
        caught = error
      }
      expect(isPairLoopError(caught, 'config_invalid'), String(caught)).toBe(true)
      expect(read(req.paths.codexConfig)).toBe(text)
    }
  })

  it.each([
    ['[mcp_servers.pair-loop]', ['mcp_servers', 'pair-loop']],
    ['  [ mcp_servers . "pair-loop" . tools.start ]  # note', ['mcp_servers', 'pair-loop', 'tools', 'start']],
    ["[[mcp_servers.'pair-loop'.x]]", ['mcp_servers', 'pair-loop', 'x']],
    ['args = ["a"]', undefined],
    ['["a", "b"],', undefined],
  ])('reads the table header %j as %j', (line, keys) => {
    expect(tableHeader(line)).toEqual(keys)
  })
})

describe('installMcpEntries: Claude Code', () => {
  it('adds the server in user scope and in the --mcp-config file, allows its tools, denies Write/Edit of the home', () => {
    const req = request()
    put(req.paths.claudeSettings, JSON.stringify({ theme: 'dark', permissions: { allow: ['Bash(ls:*)'] } }))
    put(req.paths.claudeUserConfig, JSON.stringify({ numStartups: 4, mcpServers: { other: { command: 'o' } } }))
    installMcpEntries(req)
    const server = {
      type: 'stdio',
      command: '/usr/bin/node',
      args: req.args,
      env: { PAIR_LOOP_HOME: req.pairLoopHome },
    }
    expect(json(req.paths.claudeMcpConfig)).toEqual({ mcpServers: { 'pair-loop': server } })
    expect(json(req.paths.claudeUserConfig)).toEqual({
      numStartups: 4,
      mcpServers: { other: { command: 'o' }, 'pair-loop': server },
    })
    const settings = json(req.paths.claudeSettings)
    expect(settings.theme).toBe('dark')
    expect(settings.permissions.allow).toEqual(['Bash(ls:*)', ...TOOL_NAMES.map((tool) => `mcp__pair-loop__${tool}`)])
    // the test home is $HOME/.pair-loop: Claude Code's ~ form
    expect(settings.permissions.deny).toEqual(['Write(~/.pair-loop/**)', 'Edit(~/.pair-loop/**)'])
    expect(settings.sandbox).toEqual({ allowUnsandboxedCommands: false })
  })

  it("names a home outside the person's home by its absolute path (Claude Code's //path form)", () => {
    const home = join(tempDir('pl-elsewhere-'), 'pl-home')
    const req = request({ pairLoopHome: home })
    installMcpEntries(req)
    expect(json(req.paths.claudeSettings).permissions.deny).toEqual([`Write(/${home}/**)`, `Edit(/${home}/**)`])
  })
})

describe('installMcpEntries: as a whole', () => {
  it('changes nothing the second time: every file byte for byte the same, changed false', () => {
    const req = request()
    put(req.paths.codexConfig, PERSONS_TOML)
    expect(installMcpEntries(req).changed).toBe(true)
    const paths = Object.values(req.paths).filter((path) => existsSync(path) && path.includes('.'))
    const before = paths.map(read)
    const again = installMcpEntries(req)
    expect(again.changed).toBe(false)
    expect(again.files.every((file) => !file.changed)).toBe(true)
    expect(paths.map(read)).toEqual(before)
  })

  it.each(['/tmp/pl-home', '/var/tmp/x/.pair-loop'])(
    'refuses the home %s, in a temp folder the Codex sandbox can write, writing nothing',
    (home) => {
      const req = request({ pairLoopHome: home, test: false, tempRoots: ['/tmp', '/var/tmp'] })
      expect(() => installMcpEntries(req)).toThrow(/temp folder the Codex sandbox lets the coder write/)
      expect(existsSync(req.paths.codexConfig)).toBe(false)
      expect(existsSync(req.paths.claudeSettings)).toBe(false)
    },
  )

  it("is `pair-loop mcp --install`: refused for a test's temp home without --test-home, written with it", async () => {
    const env = isolatedEnv()
    const cwd = tempDir('pl-cwd-')
    const refused = await runCli(['mcp', '--install'], { cwd, env })
    expect(refused.code).toBe(2)
    expect(refused.json.errors[0].code).toBe('usage')
    const done = await runCli(['mcp', '--install', '--test-home', '--codex'], { cwd, env })
    expect(done.code, done.stdout).toBe(0)
    expect(done.json).toMatchObject({ server: 'pair-loop', changed: true })
    expect(done.json.files.map((file: { agent: string }) => file.agent)).toEqual(['codex'])
    const server = (parse(read(join(env.HOME, '.codex', 'config.toml'))) as any).mcp_servers['pair-loop']
    expect(server.args.at(-1)).toBe('mcp')
    expect(server.args[0]).toMatch(/bin\/pair-loop\.cjs$/)
  })
})
