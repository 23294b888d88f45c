// The PR phase's main path with the real codex reviewer on the mock model API and the fake gh (issue 36, Done when):
// approved → PR opened → CI fails → fix → coder-done → review (the reviewer's thread continued) → APPROVED → push →
// pr-check success, verify ok on the new head; and a push no review saw answers next: coder-done.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, git, githubWithPrs, isolatedEnv, makeRepo, tempDir } from '../_helpers.ts'
import { world } from '../_pr.ts'
import {
  CODEX_BIN,
  REVIEW_TIMEOUT_S,
  TEST_TIMEOUT_MS,
  addToHomeConfig,
  removeLater,
  requireClis,
  runPairLoop,
  useMock,
  withReviewerVars,
} from './_harness.ts'

const APPROVED = 'The change is right.\n\nVERDICT: APPROVED'

/** A run reviewed by the real codex, approved, committed and its PR opened; then a fake GitHub world on that PR. */
async function openPr(port: number) {
  const repo = makeRepo({ 'README.md': '# demo\n' })
  const env = withReviewerVars(isolatedEnv(), port)
  removeLater(dirname(repo))
  removeLater(env.HOME)
  addToHomeConfig(env.PAIR_LOOP_HOME, { codex_bin: CODEX_BIN })
  const worldFile = join(tempDir('pl-world-'), 'world.json')
  const legacy = githubWithPrs(repo, []) as Record<string, string>
  // `finish --create-pr` opens the PR in the legacy fake (no world yet); from then on GitHub is the world file
  const cli = (args: string[], input?: string) => {
    const gh = args[0] === 'finish' ? legacy : { ...legacy, FAKE_GH_WORLD: worldFile }
    return runPairLoop(CLI_COMMAND, args, { cwd: repo, env: { ...env, ...gh }, input })
  }
  const state = (runId: string) => JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'runs', `${runId}.json`), 'utf8'))
  const commit = (message: string) => {
    git(repo, ['add', '-A', '.'])
    git(repo, ['reset', '-q', 'HANDOFF.md'])
    git(repo, ['commit', '-qm', message])
  }
  const head = () => git(repo, ['rev-parse', 'HEAD']).trim()
  const headTree = () => git(repo, ['rev-parse', 'HEAD^{tree}']).trim()
  return { repo, cli, state, commit, head, headTree, worldFile }
}

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON document, read field by field by the test
const ok = (result: { code: number | null; stdout: string; stderr: string; json?: any }, what: string) => {
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
  return result.json
}

describe.skipIf(!requireClis())('fixes after the PR, with the real codex reviewer', () => {
  const mock = useMock()

  it(
    'CI fails, the fix is reviewed in the continued thread and approved, pushed: pr-check success, verify ok; an unreviewed push asks for coder-done',
    async () => {
      const t = await openPr(mock.port)
      const runId = ok(await t.cli(['start', '--task', 'the limit (e2e PR phase)']), 'start').run_id
      writeFileSync(join(t.repo, 'app.ts'), 'export const limit = 10\n')
      ok(await t.cli(['coder-done', '--summary', 'the limit']), 'coder-done 1')
      mock.setScript([{ api: 'openai', text: APPROVED, label: 'round-1', structured: false }])
      expect(ok(await t.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)]), 'review 1').verdict).toBe('APPROVED')
      t.commit('the approved change')
      const opened = ok(await t.cli(['finish', '--verdict', 'APPROVED', '--create-pr']), 'finish')
      const setWorld = (ci: 'SUCCESS' | 'FAILURE') =>
        writeFileSync(
          t.worldFile,
          JSON.stringify(
            world({
              pr: { ...world().pr, number: opened.pr, url: opened.pr_url, head: t.head(), branch: 'main' },
              checks: [
                { type: 'CheckRun', name: 'ci', status: 'COMPLETED', conclusion: ci, url: 'https://ci.example/1' },
              ],
            }),
          ),
        )
      setWorld('FAILURE')
      expect(ok(await t.cli(['pr-check']), 'pr-check 1')).toMatchObject({ decision: 'keep_going' })

      writeFileSync(join(t.repo, 'app.ts'), 'export const limit = 12\n') // the fix CI asked for
      expect(ok(await t.cli(['coder-done', '--summary', 'fix the CI failure']), 'coder-done 2').next).toBe('review')
      mock.setScript([{ api: 'openai', text: APPROVED, label: 'round-2', structured: false }])
      const reviewed = ok(await t.cli(['review', '--timeout', String(REVIEW_TIMEOUT_S)]), 'review 2')
      expect(reviewed).toMatchObject({ verdict: 'APPROVED', next: 'push' })
      const rounds = t.state(runId).rounds
      expect(rounds[1].reviewer.session_id).toBe(rounds[0].reviewer.session_id) // the reviewer's own thread, continued

      t.commit('the reviewed fix')
      setWorld('SUCCESS') // the agent's push
      expect(ok(await t.cli(['pr-check']), 'pr-check 2')).toMatchObject({ decision: 'success', next: null })
      expect(ok(await t.cli(['verify']), 'verify')).toMatchObject({ matches: true, head_tree: t.headTree() })

      // a push no review saw: pr-check sends the agent back to coder-done
      writeFileSync(join(t.repo, 'app.ts'), 'export const limit = 99\n')
      t.commit('pushed without a review')
      setWorld('SUCCESS')
      expect(ok(await t.cli(['pr-check']), 'pr-check 3')).toMatchObject({ decision: 'escalate', next: 'coder-done' })
    },
    TEST_TIMEOUT_MS,
  )
})
