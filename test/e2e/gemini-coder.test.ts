// A real Gemini CLI (0.61.0) as the coder, offline against the mock model API (issue 35, item 2): `pair-loop start
// --coder gemini` before it runs, a `gemini -p` in the repository, `coder-done` (which finds its session itself), a
// second call resuming the session, then `budget-check`. The coder's spend is the mock's scripted token counts at the
// price table's published rates for gemini-2.5-pro, worked out here by hand (docs/reference/gemini-cli.md): each call
// once, the resume's records (a second metadata record and the history again, appended to the session's file, or to
// a file of its own when the minute changed) adding only the second response.
import { dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, makeRepo, writeFiles } from '../_helpers.ts'
import { GEMINI_BIN, GEMINI_MODEL, geminiDirs, geminiEnv, geminiSessionFilesIn, requireGemini } from './_gemini.ts'
import { addToHomeConfig, removeLater, runBinary, runPairLoop, TEST_TIMEOUT_MS, useMock } from './_harness.ts'

/** gemini-2.5-pro, USD per million tokens: input, cached input, output (thoughts included); prompts ≤ 200k. */
const RATES = { input: 1.25, cached: 0.125, output: 10 }
const FIRST = {
  promptTokenCount: 12_000,
  cachedContentTokenCount: 8_000,
  candidatesTokenCount: 500,
  thoughtsTokenCount: 200,
}
const SECOND = {
  promptTokenCount: 30_000,
  cachedContentTokenCount: 0,
  candidatesTokenCount: 1_000,
  thoughtsTokenCount: 0,
}

/** What one response's usageMetadata costs: uncached prompt, cached prompt, candidates plus thoughts. */
const usd = (u: typeof FIRST) =>
  ((u.promptTokenCount - u.cachedContentTokenCount) * RATES.input +
    u.cachedContentTokenCount * RATES.cached +
    (u.candidatesTokenCount + u.thoughtsTokenCount) * RATES.output) /
  1_000_000

function ok(result: { code: number | null; stdout: string; stderr: string }, what: string) {
  expect(result.code, `${what} failed\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
}

describe.skipIf(!requireGemini())('a real gemini coder (Gemini CLI 0.61.0 on the mock)', () => {
  const mock = useMock()

  it(
    "has its two calls counted once each at tokens × the table's rates, the session found by coder-done",
    async () => {
      // $0.013 and $0.0475 (by hand: 4000 × 1.25 + 8000 × 0.125 + 700 × 10; 30000 × 1.25 + 1000 × 10)
      expect([usd(FIRST), usd(SECOND)].map((n) => Math.round(n * 1e7))).toEqual([130_000, 475_000])
      const repo = makeRepo({ 'README.md': '# demo\n', 'src/a.ts': 'export const a = 1\n' })
      const env = isolatedEnv() as Record<string, string>
      removeLater(dirname(repo))
      removeLater(env.HOME!)
      const dirs = geminiDirs()
      const coderEnv = geminiEnv(mock.port, dirs)
      // the person's Gemini home is the coder's (never the real ~/.gemini), and start's environment names it too
      addToHomeConfig(env.PAIR_LOOP_HOME!, { gemini_cli_home: dirs.geminiHome })
      const pairLoop = (args: string[]) =>
        runPairLoop(CLI_COMMAND, args, { cwd: repo, env: { ...env, GEMINI_CLI_HOME: dirs.geminiHome } })
      const gemini = async (prompt: string, usage: typeof FIRST, resume?: string) => {
        mock.setScript([{ api: 'gemini', text: 'Done: a is 2.', usage }])
        const args = ['--skip-trust', '-o', 'json', '-m', GEMINI_MODEL, ...(resume ? ['--resume', resume] : [])]
        const run = await runBinary(GEMINI_BIN, [...args, '-p', ''], { cwd: repo, env: coderEnv, input: prompt })
        ok(run, 'gemini -p (the coder)')
        return JSON.parse(run.stdout) as { session_id: string; stats: { models: Record<string, unknown> } }
      }

      const start = await pairLoop(['start', '--task', 'make a 2', '--coder', 'gemini', '--budget-usd', '5'])
      ok(start, 'start')
      expect(start.json).toMatchObject({ coder: 'gemini' })

      const first = await gemini('Make a equal 2.', FIRST)
      expect(Object.keys(first.stats.models)).toEqual([GEMINI_MODEL])
      writeFiles(repo, { 'src/a.ts': 'export const a = 2\n' })
      const done = await pairLoop(['coder-done', '--summary', 'a is 2'])
      ok(done, 'coder-done')
      expect(done.json.session_id).toBe(first.session_id)

      const second = await gemini('Now say so.', SECOND, first.session_id)
      expect(second.session_id).toBe(first.session_id)
      const files = geminiSessionFilesIn(dirs.geminiHome)

      const check = await pairLoop(['budget-check'])
      ok(check, 'budget-check')
      expect(check.json.by_role.coder.usd).toBeCloseTo(usd(FIRST) + usd(SECOND), 12)
      expect(check.json.by_role.coder.tokens).toEqual({
        input: 4_000 + 30_000,
        output: 700 + 1_000,
        cache_write_5m: 0,
        cache_write_1h: 0,
        cache_read: 8_000,
      })
      expect(Object.keys(check.json.by_role.coder.models)).toEqual([GEMINI_MODEL])
      expect(check.json).toMatchObject({ unpriced_models: [], complete: true })
      // every file of the session is a source (the resume's own file too, when its minute differs), read, none missing
      const coderSources = check.json.sources.filter((s: { role: string }) => s.role === 'coder')
      expect(coderSources.map((s: { path: string }) => s.path).sort()).toEqual([...files].sort())
      for (const source of coderSources)
        expect(source).toMatchObject({ kind: 'gemini', session: first.session_id, status: 'read' })
    },
    TEST_TIMEOUT_MS,
  )
})
