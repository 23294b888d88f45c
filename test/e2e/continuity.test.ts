// Continuity with the real codex on the mock model API (issue 36, items 2 and 4): round 2 continues round 1's
// reviewer thread (`codex exec resume`), stays read-only although `resume` takes no --sandbox (a write it is scripted
// to make fails; the control shows the same write succeeding when the resumed call is not forced read-only), and its
// recorded cost is what that call alone billed, not round 1's history again.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, makeRepo, writeFiles } from '../_helpers.ts'
import {
  CODEX_BIN,
  REVIEW_TIMEOUT_S,
  TEST_TIMEOUT_MS,
  addToHomeConfig,
  codexCost,
  promptIn,
  removeLater,
  requireClis,
  runBinary,
  runPairLoop,
  useMock,
  withReviewerVars,
} from './_harness.ts'

const FILES = { 'README.md': '# demo\n', 'src/a.ts': 'export const a = 1\n' }
const TASK = 'Change a (e2e continuity)'
const ROUND1 = '1. [bug/major] src/a.ts:1 — ROUND-ONE-FINDING-6b2e: a must be 3\n\nVERDICT: CHANGES_REQUESTED'
const ROUND2 = 'The finding is fixed.\n\nVERDICT: APPROVED'
/** What each response bills (the mock's Responses usage; codex reports their sum per turn). */
const usage = (input: number, cached: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
})
const asCodex = (u: ReturnType<typeof usage>) => ({
  input_tokens: u.input_tokens,
  cached_input_tokens: u.input_tokens_details.cached_tokens,
  cache_write_input_tokens: 0,
  output_tokens: u.output_tokens,
})
const U1 = usage(9000, 0, 300)
const U2_TOOL = usage(9500, 9000, 40)
const U2_ANSWER = usage(9700, 9500, 60)

function sandboxRun(port: number) {
  const repo = makeRepo(FILES)
  const env = withReviewerVars(isolatedEnv(), port)
  removeLater(dirname(repo))
  removeLater(env.HOME)
  addToHomeConfig(env.PAIR_LOOP_HOME, { codex_bin: CODEX_BIN })
  const cli = (args: string[], input?: string) => runPairLoop(CLI_COMMAND, args, { cwd: repo, env, input })
  const state = (runId: string) => JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'runs', `${runId}.json`), 'utf8'))
  return { repo, env, cli, state }
}

const ok = (result: { code: number | null; stdout: string; stderr: string }, what: string) =>
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)

describe.skipIf(!requireClis())('continuity with the real codex', () => {
  const mock = useMock()

  it(
    "round 2 continues round 1's thread read-only (its scripted write fails) and records only what it billed",
    async () => {
      const sb = sandboxRun(mock.port)
      const start = await sb.cli(['start', '--task', TASK])
      ok(start, 'start')
      const runId: string = start.json.run_id
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 2\n' })
      ok(await sb.cli(['coder-done', '--summary', 'a is 2']), 'coder-done 1')
      mock.setScript([{ api: 'openai', text: ROUND1, usage: U1, label: 'round-1', structured: false }])
      ok(await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)]), 'review 1')
      ok(await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], 'a is 3'), 'reply')
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 3\n' })
      ok(await sb.cli(['coder-done', '--summary', 'a is 3']), 'coder-done 2')

      // round 2: the model first tries to write into the folder codex runs in (the reviewer's copy) and the repository
      const marker = 'WRITTEN-BY-RESUMED-REVIEWER'
      const cmd = `touch ${marker} ${join(sb.repo, marker)}; echo tried`
      mock.setScript([
        {
          api: 'openai',
          text: '',
          call: { type: 'function_call', name: 'exec_command', arguments: { cmd } },
          usage: U2_TOOL,
          label: 'round-2-tool',
          structured: false,
        },
        { api: 'openai', text: ROUND2, usage: U2_ANSWER, label: 'round-2', structured: false },
      ])
      const review2 = await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)])
      ok(review2, 'review 2')
      expect(review2.json).toMatchObject({ round: 2, verdict: 'APPROVED' })

      const [round1, round2] = sb.state(runId).rounds.map((round: any) => round.reviewer)
      expect(round2.session_id).toBe(round1.session_id) // the same thread, continued
      // the continued thread carried round 1's prompt to the model: its history, not a new session
      const request = mock.modelCalls().find((call) => call.label === 'round-2-tool')!
      expect(JSON.stringify(mock.body(request))).toContain('ROUND-ONE-FINDING-6b2e')
      expect(promptIn(mock.body(request), 'Since the last review')).toBeDefined()
      // read-only: the write failed in the copy and in the repository
      const copy = join(sb.env.PAIR_LOOP_HOME, 'runs', runId, 'reviewed-snapshot')
      expect(existsSync(join(copy, marker))).toBe(false)
      expect(existsSync(join(sb.repo, marker))).toBe(false)
      // round 2 cost what its two responses billed, priced by hand (gpt-5.5), round 1's tokens not again
      const billed = codexCost(asCodex(U2_TOOL)) + codexCost(asCodex(U2_ANSWER))
      expect(round2.cost.usd).toBeCloseTo(billed, 9)
      expect(round1.cost.usd).toBeCloseTo(codexCost(asCodex(U1)), 9)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'control: the same resumed thread not forced read-only makes the write (so the forcing is what stops it)',
    async () => {
      const sb = sandboxRun(mock.port)
      ok(await sb.cli(['start', '--task', TASK]), 'start')
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 2\n' })
      ok(await sb.cli(['coder-done', '--summary', 'a is 2']), 'coder-done')
      mock.setScript([{ api: 'openai', text: ROUND1, label: 'round-1', structured: false }])
      const review = await sb.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)])
      ok(review, 'review')
      const thread: string = review.json.reviewer.session_id
      const marker = join(sb.repo, 'WRITTEN-BY-UNFORCED-RESUME')
      mock.setScript([
        {
          api: 'openai',
          text: '',
          call: { type: 'function_call', name: 'exec_command', arguments: { cmd: `touch ${marker}; echo tried` } },
        },
        { api: 'openai', text: ROUND2 },
      ])
      const argv = [
        'exec',
        'resume',
        '--json',
        '--skip-git-repo-check',
        '-c',
        'sandbox_mode="danger-full-access"',
        thread,
        '-',
      ]
      const resumed = await runBinary(CODEX_BIN, argv, {
        cwd: sb.repo,
        env: sb.env as Record<string, string>,
        input: 'go on',
      })
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(existsSync(marker)).toBe(true)
    },
    TEST_TIMEOUT_MS,
  )
})
