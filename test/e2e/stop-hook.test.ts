// The Stop hook in a real agent session against the mock model API: claude -p with this repository loaded as the
// Claude Code plugin (--plugin-dir: its hooks/hooks.json runs `pair-loop stop-hook` from the built dist/), in a
// repository whose active run has work not handed over. The hook blocks once with the next command as its reason, the
// session continues (a second model call carrying that reason), and the second stop is let through. Codex 0.171's own
// Stop hook (~/.codex/hooks.json) does the same.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ensureBuilt } from '../_build.ts'
import { CLI_COMMAND, isBun, isolatedEnv, makeRepo, ROOT } from '../_helpers.ts'
import {
  CLAUDE_BIN,
  CLAUDE_MODEL,
  CODEX_BIN,
  TEST_TIMEOUT_MS,
  claudeVars,
  removeLater,
  requireClis,
  runBinary,
  runPairLoop,
  writeCodexConfig,
  useMock,
} from './_harness.ts'

const PLUGIN_ROOT = ROOT
const HOOK_FEEDBACK = /Stop hook feedback:\s*pair-loop: the working tree changed since the last `coder-done`/

/** A repository with an active run and a file written since its start: work not handed over. */
async function runWithWorkInProgress() {
  const repo = makeRepo({ 'README.md': '# demo\n' })
  const env = isolatedEnv()
  removeLater(dirname(repo))
  removeLater(env.HOME)
  const started = await runPairLoop(CLI_COMMAND, ['start', '--task', 'Add a greeting'], { cwd: repo, env })
  expect(started.code, started.stderr).toBe(0)
  writeFileSync(join(repo, 'greeting.ts'), "export const greeting = 'hello'\n")
  return { repo, env }
}

/** The text of every user turn the model was sent in a request (Anthropic `messages` or Responses `input`). */
function userTexts(body: any): string {
  const texts: string[] = []
  const collect = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value)
    else if (Array.isArray(value)) value.forEach(collect)
    else if (value && typeof value === 'object') Object.values(value).forEach(collect)
  }
  collect(body?.messages ?? body?.input)
  return texts.join('\n')
}

describe.skipIf(!requireClis())('the Stop hook in a real agent session', () => {
  // the plugin's hook runs the built CLI; vitest's global setup builds it, bun's does not
  const mock = useMock(() => isBun && ensureBuilt())

  it(
    'claude -p with the plugin: blocks once with `pair-loop coder-done` in its reason, and the session goes on',
    async () => {
      const { repo, env } = await runWithWorkInProgress()
      const before = mock.modelCalls().length
      const session = await runBinary(
        CLAUDE_BIN,
        ['-p', '--output-format', 'json', '--model', CLAUDE_MODEL, '--plugin-dir', PLUGIN_ROOT, 'Say hello.'],
        { cwd: repo, env: { ...env, ...claudeVars(mock.port) } },
      )
      expect(session.code, session.stderr).toBe(0)
      expect(JSON.parse(session.stdout)).toMatchObject({ type: 'result', is_error: false, num_turns: 2 })
      const calls = mock.modelCalls().slice(before)
      expect(calls).toHaveLength(2) // the first answer, then the one the hook sent it back for; the second stop ends it
      expect(userTexts(mock.body(calls[0]!))).not.toMatch(HOOK_FEEDBACK)
      const second = userTexts(mock.body(calls[1]!))
      expect(second).toMatch(HOOK_FEEDBACK)
      expect(second).toContain('pair-loop coder-done --summary-file -')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'claude -p with the plugin and nothing to hand over: one answer, no second turn',
    async () => {
      const repo = makeRepo({ 'README.md': '# demo\n' })
      const env = isolatedEnv()
      removeLater(dirname(repo))
      removeLater(env.HOME)
      expect((await runPairLoop(CLI_COMMAND, ['start', '--task', 't'], { cwd: repo, env })).code).toBe(0)
      const before = mock.modelCalls().length
      const session = await runBinary(
        CLAUDE_BIN,
        ['-p', '--output-format', 'json', '--model', CLAUDE_MODEL, '--plugin-dir', PLUGIN_ROOT, 'Say hello.'],
        { cwd: repo, env: { ...env, ...claudeVars(mock.port) } },
      )
      expect(session.code, session.stderr).toBe(0)
      expect(mock.modelCalls().slice(before)).toHaveLength(1)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'codex exec with the hook in ~/.codex/hooks.json: the same block, once, and the turn goes on',
    async () => {
      const { repo, env } = await runWithWorkInProgress()
      writeCodexConfig(env.CODEX_HOME!, mock.port)
      const hook = `sh '${join(PLUGIN_ROOT, 'hooks', 'stop-hook.sh')}'`
      writeFileSync(
        join(env.CODEX_HOME!, 'hooks.json'),
        JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: hook, timeout: 60 }] }] } }),
      )
      const before = mock.modelCalls().length
      // trusting a hook is the person's step in the Codex TUI (/hooks); a test stands in for it with the flag
      const session = await runBinary(
        CODEX_BIN,
        ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '-C', repo, '-'],
        { cwd: repo, env: { ...env, MOCK_API_KEY: 'sk-mock-openai' }, input: 'Say hello.' },
      )
      expect(session.code, session.stderr).toBe(0)
      const calls = mock.modelCalls().slice(before)
      expect(calls).toHaveLength(2)
      expect(userTexts(mock.body(calls[1]!))).toContain('pair-loop coder-done --summary-file -')
    },
    TEST_TIMEOUT_MS,
  )
})
