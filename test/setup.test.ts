// setup (issue 33): the person's one step. It finds claude and codex on the PATH of the person running it, records
// their absolute paths in the home config (every other key kept), asks nothing, and changes nothing the second time.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configPath } from '../lib/ground/paths.ts'
import { expectError, expectOk } from './_expect.ts'
import { sandbox, tempDir } from './_helpers.ts'

/** A folder with an executable `claude` and `codex`, as an install would leave them. */
function installed() {
  const dir = tempDir('pl-agents-')
  for (const name of ['claude', 'codex']) {
    writeFileSync(join(dir, name), '#!/bin/sh\n')
    chmodSync(join(dir, name), 0o755)
  }
  return dir
}

describe('pair-loop setup', () => {
  it('records the absolute paths of claude and codex found on the PATH, names gemini as not found, and keeps every other key of the config', async () => {
    const sb = sandbox()
    writeFileSync(configPath(sb.home), JSON.stringify({ budget: { per_run_usd: 5 }, pair_loop: { max_rounds: 4 } }))
    const dir = installed()
    const env = { PATH: `${dir}:/usr/bin:/bin`, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' }
    const done = expectOk(await sb.cli(['setup', '--allow-temp-home'], { env }))
    expect(done).toMatchObject({
      changed: true,
      config_path: configPath(sb.home),
      recorded: { claude_bin: join(dir, 'claude'), codex_bin: join(dir, 'codex'), gemini_bin: null },
      not_found: ['gemini'],
    })
    expect(done.recorded).not.toHaveProperty('gemini_cli_home', expect.any(String))
    expect(JSON.parse(readFileSync(configPath(sb.home), 'utf8'))).toEqual({
      budget: { per_run_usd: 5 },
      pair_loop: { max_rounds: 4, claude_bin: join(dir, 'claude'), codex_bin: join(dir, 'codex') },
    })
    const again = expectOk(await sb.cli(['setup', '--allow-temp-home'], { env }))
    expect(again).toMatchObject({ changed: false, recorded: done.recorded })
  })

  it("writes pair-loop's MCP entries into the person's Codex and Claude Code configs, once; --skip-mcp leaves them alone", async () => {
    const sb = sandbox()
    const codexConfig = join(sb.env.CODEX_HOME!, 'config.toml')
    const claudeUser = join(sb.env.CLAUDE_CONFIG_DIR!, '.claude.json')
    const contents = () =>
      [codexConfig, claudeUser].map((file) => (existsSync(file) ? readFileSync(file, 'utf8') : null))
    const before = contents()
    expectOk(await sb.cli(['setup', '--allow-temp-home', '--skip-mcp'], { env: { PATH: installed() } }))
    expect(contents()).toEqual(before)
    const done = expectOk(await sb.cli(['setup', '--allow-temp-home'], { env: { PATH: installed() } }))
    expect(done.mcp).not.toBeNull()
    expect(readFileSync(codexConfig, 'utf8')).toContain('[mcp_servers.pair-loop]')
    expect(JSON.parse(readFileSync(claudeUser, 'utf8')).mcpServers['pair-loop'].args.at(-1)).toBe('mcp')
    const written = contents()
    const again = expectOk(await sb.cli(['setup', '--allow-temp-home'], { env: { PATH: installed() } }))
    expect(again.mcp.changed).toBe(false)
    expect(contents()).toEqual(written)
  })

  it('records the agents’ folders the person’s environment names', async () => {
    const sb = sandbox()
    const done = expectOk(await sb.cli(['setup', '--allow-temp-home'], { env: { PATH: installed() } }))
    expect(done.recorded).toMatchObject({ claude_config_dir: sb.env.CLAUDE_CONFIG_DIR, codex_home: sb.env.CODEX_HOME })
  })

  it('refuses a PAIR_LOOP_HOME under /tmp with usage naming --allow-temp-home, and writes nothing', async () => {
    const sb = sandbox()
    const home = join(tempDir('pl-tmp-home-'), 'pair-loop')
    const refused = await sb.cli(['setup'], { env: { PATH: installed(), PAIR_LOOP_HOME: home } })
    const error = expectError(refused, 'usage')
    expect(error).toMatchObject({ flag: '--allow-temp-home', home })
    expect(() => readFileSync(join(home, 'config.json'))).toThrow()
  })

  it('refuses a broken config with config_invalid and leaves it as it was', async () => {
    const sb = sandbox()
    writeFileSync(configPath(sb.home), '{ "pair_loop": ')
    expectError(await sb.cli(['setup', '--allow-temp-home'], { env: { PATH: installed() } }), 'config_invalid')
    expect(readFileSync(configPath(sb.home), 'utf8')).toBe('{ "pair_loop": ')
  })
})
