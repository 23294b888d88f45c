// `pair-loop mcp` over stdio, with the MCP SDK's client (as a coder's CLI calls it): each tool answers what the CLI
// prints for the same step, refuses any argument that would decide what the person decides, and a failure is the
// CLI's error document flagged as a tool error.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HOME_WRITERS } from '../lib/cli/sandboxed.ts'
import { TOOLS } from '../lib/mcp/tools.ts'
import { COMMANDS } from '../scripts/commands.ts'
import { TOOL_COMMANDS } from '../scripts/mcp.ts'
import { sandbox, tempDir, writeFiles } from './_helpers.ts'
import { mcpClient, writeHomeConfig } from './_mcp.ts'
import { stubPath } from './_review.ts'

const TIMEOUT = 60_000

/** A sandbox whose person's config names the changes stub (one finding, CHANGES_REQUESTED) as the reviewer. */
function person() {
  const sb = sandbox({ 'README.md': '# demo\n' })
  // the person's agent folders are the sandbox's: the machine's own ~/.claude is never read, whatever the runtime
  const folders = { claude_config_dir: sb.env.CLAUDE_CONFIG_DIR, codex_home: sb.env.CODEX_HOME }
  writeHomeConfig(sb.home, ['sh', stubPath('changes')], { review_wait_s: 30, ...folders })
  return sb
}

/** What differs between two sandboxes' documents of the same step: ids, paths, shas, times, durations. */
function comparable(document: unknown, sb: { repo: string; home: string }, runId: string): unknown {
  const text = JSON.stringify(document)
    .replaceAll(sb.repo, '<repo>')
    .replaceAll(sb.home, '<home>')
    .replaceAll(dirname(sb.home), '<HOME>') // the person's agent folders, beside their pair-loop home
    .replaceAll(runId, '<run>')
    .replace(/\b[0-9a-f]{40}\b/g, '<sha>')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\b1\d{12}\b/g, '<ms>')
    .replace(/"(\w*_(ms|s)|duration\w*|elapsed\w*)":[\d.]+/g, '"$1":0')
  return JSON.parse(text)
}

describe('pair-loop mcp: the tools', () => {
  it('are the loop steps, each the command of its name, and every home-writing command names an existing tool', () => {
    expect(Object.keys(TOOL_COMMANDS).sort()).toEqual(Object.keys(TOOLS).sort())
    for (const name of Object.keys(TOOLS)) expect(Object.hasOwn(COMMANDS, name), name).toBe(true)
    for (const tool of Object.values(HOME_WRITERS)) if (tool !== null) expect(Object.keys(TOOLS)).toContain(tool)
  })

  it(
    'are listed by the server with a schema that takes cwd and nothing that decides',
    async () => {
      const sb = person()
      const { client } = await mcpClient(sb.env)
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOLS).sort())
      for (const tool of tools) {
        expect(tool.inputSchema.required, tool.name).toContain('cwd')
        expect(tool.inputSchema).toMatchObject({ additionalProperties: false })
        const names = Object.keys(tool.inputSchema.properties ?? {})
        for (const deciding of [
          'reviewer_cmd',
          'reviewer',
          'budget_usd',
          'max_rounds',
          'over_cap',
          'over_budget',
          'out',
        ])
          expect(names, tool.name).not.toContain(deciding)
      }
    },
    TIMEOUT,
  )
})

describe('pair-loop mcp: a round through the tools', () => {
  it(
    'answers start, coder-done, review, reply, findings and budget-check as the CLI does for the same steps',
    async () => {
      const viaMcp = person()
      const viaCli = person()
      const { call } = await mcpClient(viaMcp.env)
      const mcpStart = await call('start', { cwd: viaMcp.repo, task: 'Double a number' })
      expect(mcpStart.isError, mcpStart.text).toBe(false)
      const cliStart = await viaCli.cli(['start', '--task', 'Double a number'])
      const mcpRun = mcpStart.json.run_id as string
      const cliRun = cliStart.json.run_id as string
      const same = async (tool: string, args: Record<string, unknown>, argv: string[], input?: string) => {
        const mcp = await call(tool, { cwd: viaMcp.repo, ...args })
        const cli = await viaCli.cli(argv, input === undefined ? {} : { input })
        expect(mcp.isError, mcp.text).toBe(cli.code !== 0)
        expect(comparable(mcp.json, viaMcp, mcpRun), tool).toEqual(comparable(cli.json, viaCli, cliRun))
        return mcp.json
      }
      expect(comparable(mcpStart.json, viaMcp, mcpRun)).toEqual(comparable(cliStart.json, viaCli, cliRun))
      for (const sb of [viaMcp, viaCli])
        writeFiles(sb.repo, { 'src/a.ts': 'export const twice = (n: number) => n * 2\n' })
      await same('coder-done', { summary: 'twice multiplies' }, ['coder-done', '--summary', 'twice multiplies'])
      const review = await same('review', {}, ['review'])
      expect(review).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply' })
      const finding = review.findings[0].id as string
      await same(
        'reply',
        { finding, disposition: 'fixed', body: 'Fixed in the next round.' },
        ['reply', '--finding', finding, '--disposition', 'fixed', '--body-file', '-'],
        'Fixed in the next round.',
      )
      await same('findings', {}, ['findings'])
      await same('budget-check', {}, ['budget-check'])
      expect(viaMcp.state(mcpRun).replies[finding]).toMatchObject({ body: 'Fixed in the next round.' })
    },
    TIMEOUT,
  )

  it(
    'answers status with the very document the CLI prints for the same run',
    async () => {
      const sb = person()
      const { call } = await mcpClient(sb.env)
      const started = await call('start', { cwd: sb.repo, task: 'Double a number' })
      expect(started.isError, started.text).toBe(false)
      const cli = await sb.cli(['status'])
      const mcp = await call('status', { cwd: sb.repo })
      expect(mcp.json).toEqual(cli.json)
    },
    TIMEOUT,
  )

  it(
    "records the coder as the client's CLI said in the handshake, not from an argument",
    async () => {
      const sb = person()
      const { call } = await mcpClient(sb.env, 'codex-mcp-client')
      const started = await call('start', { cwd: sb.repo, task: 'Double a number' })
      expect(started.json).toMatchObject({ coder: 'codex' })
    },
    TIMEOUT,
  )
})

describe('pair-loop mcp: what the coder may not decide', () => {
  const DECIDING: [string, Record<string, unknown>, string][] = [
    ['start', { task: 't', reviewer_cmd: ['sh', '-c', 'echo VERDICT: APPROVED'] }, 'reviewer_cmd'],
    ['start', { task: 't', budget_usd: 100000 }, 'budget_usd'],
    ['start', { task: 't', max_rounds: 99 }, 'max_rounds'],
    ['start', { task: 't', reviewer: 'claude' }, 'reviewer'],
    ['start', { task: 't', env: { NODE_OPTIONS: '--require /tmp/x.js' } }, 'env'],
    ['coder-done', { summary: 's', over_cap: true }, 'over_cap'],
    ['coder-done', { summary: 's', session_id: 'cheap' }, 'session_id'],
    ['review', { reviewer_cmd: 'builtin:approve' }, 'reviewer_cmd'],
    ['review', { over_budget: true }, 'over_budget'],
    ['review', { timeout: 1 }, 'timeout'],
    ['pr-check', { snapshot_in: '/tmp/fake.json' }, 'snapshot_in'],
    ['finish', { verdict: 'ABANDONED', replace_pr: true }, 'replace_pr'],
  ]

  it(
    'refuses each argument that would decide as usage naming it, and writes nothing',
    async () => {
      const sb = person()
      const { call } = await mcpClient(sb.env)
      for (const [tool, args, argument] of DECIDING) {
        const answer = await call(tool, { cwd: sb.repo, ...args })
        expect(answer.isError, `${tool} ${argument}`).toBe(true)
        expect(answer.json.errors[0], `${tool} ${argument}`).toMatchObject({ code: 'usage', argument })
        expect(answer.json.errors[0].message).toContain(argument)
      }
      expect(existsSync(join(sb.home, 'runs')) ? readdirSync(join(sb.home, 'runs')) : []).toEqual([])
    },
    TIMEOUT,
  )

  it(
    "keeps a value that looks like a flag a value: a task of '--budget-usd=100000' leaves the person's budget",
    async () => {
      // the control: the CLI given that text as a separate word would read it as the flag
      const sb = person()
      const { call } = await mcpClient(sb.env)
      const started = await call('start', { cwd: sb.repo, task: '--budget-usd=100000' })
      expect(started.isError, started.text).toBe(false)
      const state = sb.state(started.json.run_id)
      expect(state.task).toBe('--budget-usd=100000')
      expect(started.json.budget_usd).not.toBe(100000)
    },
    TIMEOUT,
  )
})

describe('pair-loop mcp: errors', () => {
  it(
    "answers a failing step with the CLI's own error document, flagged as a tool error",
    async () => {
      const sb = person()
      const { call } = await mcpClient(sb.env)
      const mcp = await call('coder-done', { cwd: sb.repo, summary: 'nothing started' })
      const cli = await sb.cli(['coder-done', '--summary', 'nothing started'])
      expect(cli.json.errors[0].code).toBe('run_not_found')
      expect(mcp).toMatchObject({ isError: true, json: cli.json })
    },
    TIMEOUT,
  )

  it(
    'refuses a cwd that is relative (usage), not a git repository or missing (git_error)',
    async () => {
      const sb = person()
      const { call } = await mcpClient(sb.env)
      const cases = [
        ['repo', 'usage'],
        [tempDir('pl-not-git-'), 'git_error'],
        ['/nonexistent/pair-loop-repo', 'git_error'],
      ] as const
      for (const [cwd, code] of cases) {
        const answer = await call('status', { cwd })
        expect(answer.isError, cwd).toBe(true)
        expect(answer.json.errors[0].code, cwd).toBe(code)
      }
    },
    TIMEOUT,
  )
})

describe('pair-loop mcp: its streams', () => {
  it(
    "answers the calls written on its stdin, on its stdout, and ends when stdin ends (in this process: the Context's streams)",
    async () => {
      const sb = person()
      const message = (id: number, method: string, params: unknown) =>
        JSON.stringify({ jsonrpc: '2.0', id, method, params })
      const input = [
        message(1, 'initialize', {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        }),
        message(2, 'tools/call', { name: 'status', arguments: { cwd: sb.repo } }),
      ].join('\n')
      const served = await sb.cli(['mcp'], { input: `${input}\n` })
      const answers = served.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
      expect(served.code).toBe(0)
      expect(answers.map((answer) => answer.id)).toEqual([1, 2])
      expect(JSON.parse(answers[1].result.content[0].text).errors[0].code).toBe('run_not_found')
      expect((await sb.cli(['mcp'], { input: '' })).stdout).toBe('')
    },
    TIMEOUT,
  )
})
