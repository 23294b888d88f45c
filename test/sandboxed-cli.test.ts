// The CLI run from a coder's sandboxed shell: bubblewrap mounts $PAIR_LOOP_HOME read-only, as Codex's workspace-write
// and Claude Code's Bash sandboxes do. A command that writes the home fails before writing anything, with io_error
// naming the MCP tool to call instead; the same command outside the sandbox works (the control).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, runProcess, sandbox } from './_helpers.ts'
import { startRun } from './_expect.ts'

const BWRAP = spawnSync('bwrap', ['--version'], { encoding: 'utf8' }).status === 0
const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '')
if (!BWRAP && IN_CI) throw new Error('CI=true and bubblewrap (bwrap) is missing: .ci/run installs it; nothing may skip')

/** `argv` in a bubblewrap sandbox in `cwd`: the whole filesystem as it is, but `readOnly` mounted read-only. */
const inSandbox = (readOnly: string, cwd: string, argv: string[]) => [
  'bwrap',
  '--bind',
  '/',
  '/',
  '--ro-bind',
  readOnly,
  readOnly,
  '--chdir',
  cwd,
  ...argv,
]

describe.skipIf(!BWRAP)('the CLI in a sandbox whose PAIR_LOOP_HOME is read-only', () => {
  it('refuses coder-done with io_error naming mcp__pair-loop__coder-done, and changes nothing', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const stateFile = join(sb.home, 'runs', `${runId}.json`)
    const before = readFileSync(stateFile, 'utf8')
    const [program, ...args] = inSandbox(sb.home, sb.repo, [...CLI_COMMAND, 'coder-done', '--summary', 'done'])
    const result = await runProcess([program!, ...args], { cwd: sb.repo, env: sb.env })
    expect(result.code, result.stderr).toBe(74)
    const error = JSON.parse(result.stdout).errors[0]
    expect(error).toMatchObject({ code: 'io_error', errno: 'EROFS', mcp_tool: 'mcp__pair-loop__coder-done' })
    expect(error.message).toContain('mcp__pair-loop__coder-done')
    expect(result.stderr).toContain('mcp__pair-loop__coder-done')
    expect(readFileSync(stateFile, 'utf8')).toBe(before)
    // the control: the same command, outside the sandbox, records the round
    const outside = await sb.cliProcess(['coder-done', '--summary', 'done'])
    expect(outside.code, outside.stdout).toBe(0)
  })

  it("keeps the coder's shell from rewriting the run's JSON, which it can do with write access (the old SKILL.md grant)", async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const stateFile = join(sb.home, 'runs', `${runId}.json`)
    const forge = `sed -i 's/"phase": "coding"/"phase": "approved"/' '${stateFile}'`
    const [bwrap, ...args] = inSandbox(sb.home, sb.repo, ['sh', '-c', forge])
    const sandboxed = spawnSync(bwrap!, args, { encoding: 'utf8' })
    expect(sandboxed.status).not.toBe(0)
    expect(sandboxed.stderr).toMatch(/Read-only file system/)
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).phase).toBe('coding')
    // the attack, given the grant (the home writable from the sandbox, as `--add-dir ~/.pair-loop` made it)
    const granted = spawnSync('bwrap', ['--bind', '/', '/', 'sh', '-c', forge], { encoding: 'utf8' })
    expect(granted.status, granted.stderr).toBe(0)
    expect(readFileSync(stateFile, 'utf8')).toMatch(/"phase":\s*"approved"/)
  })
})
