// gh side effects are keyed, claimed and recorded under the run's lock (issue 11, item 15): two `reply --post-pr` or
// two `finish --create-pr` processes at once post once, counted by the fake gh; and every gh call goes through the one
// bounded runner of lib/ground/gh.ts, which retries only what GitHub did not do.
import { readdirSync, readFileSync } from 'node:fs'
import { delimiter, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { classifyFailure } from '../lib/ground/gh.ts'
import { ROOT, recordReview, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, reviewWith, runInReview } from './_expect.ts'
import { FAKE_GH } from './_pr.ts'

/** A sandbox with the fake gh on PATH, every call of it taking `delayMs` so two callers overlap. */
function slowGh(delayMs = 800) {
  const sb = sandbox()
  const ghDir = tempDir('pl-gh-')
  const env = { PATH: `${FAKE_GH}${delimiter}${sb.env.PATH}`, FAKE_GH_DIR: ghDir, FAKE_GH_DELAY_MS: String(delayMs) }
  type Options = { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv }
  const cli = (args: string[], options: Options = {}) => sb.cli(args, { ...options, env: { ...env, ...options.env } })
  // the callers at once are processes of their own: a claim is held by a process, and one process never races itself
  const cliProcess = (args: string[], options: Options = {}) =>
    sb.cliProcess(args, { ...options, env: { ...env, ...options.env } })
  const calls = () =>
    readFileSync(join(ghDir, 'calls.log'), 'utf8')
      .split('--\n')
      .filter(Boolean)
      .map((call) => call.trimEnd().split('\n'))
  return { ...sb, cli, cliProcess, calls }
}

describe('two processes at once, one gh side effect', () => {
  it('reply --post-pr: one comment; the other process is duplicate_reply; the reply is recorded once', async () => {
    const sb = slowGh()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED', '--pr', '42']))
    const results = await Promise.all(
      ['a', 'b'].map((body) =>
        sb.cliProcess(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-', '--post-pr'], {
          input: body,
        }),
      ),
    )
    expect(results.map((r) => r.code).sort()).toEqual([0, 4])
    const loser = expectError(results.find((r) => r.code === 4)!, 'duplicate_reply')
    expect(loser.key).toBe(`${runId}:reply:1.1`)
    expect(sb.calls().filter((call) => call[0] === 'api')).toHaveLength(1)
    const state = sb.state(runId)
    expect(state.replies['1.1']!.comment_url).toMatch(/issuecomment-1000$/)
    expect(state.claims).toEqual({})
  })

  it('finish --create-pr: one `gh pr create`; both report the same PR', async () => {
    const sb = slowGh()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, 'VERDICT: APPROVED')
    const results = await Promise.all(
      [1, 2].map(() => sb.cliProcess(['finish', '--verdict', 'APPROVED', '--create-pr'])),
    )
    const [first, second] = results.map(expectOk)
    expect(first).toEqual(second)
    expect(first.pr).toBe(42)
    expect(sb.calls().filter((call) => call[0] === 'pr' && call[1] === 'create')).toHaveLength(1)
    expect(sb.state(runId)).toMatchObject({ pr: 42, claims: {} })
  })
})

describe('the one gh runner', () => {
  it.each([
    [{ exitCode: null, stderr: '', stdout: '' }, 'timeout'],
    [{ exitCode: 1, stderr: 'HTTP 502: Bad Gateway (https://api.github.com/graphql)', stdout: '' }, 'server'],
    [{ exitCode: 1, stderr: 'HTTP 503: Service Unavailable', stdout: '' }, 'server'],
    [{ exitCode: 1, stderr: 'HTTP 429: Too Many Requests', stdout: '' }, 'rate_limited'],
    [{ exitCode: 1, stderr: 'HTTP 403: API rate limit exceeded for user ID 1.', stdout: '' }, 'rate_limited'],
    [{ exitCode: 1, stderr: 'HTTP 403: You have exceeded a secondary rate limit.', stdout: '' }, 'rate_limited'],
    [{ exitCode: 1, stderr: 'HTTP 403: Resource not accessible by integration', stdout: '' }, 'refused'],
    [{ exitCode: 1, stderr: 'HTTP 404: Not Found', stdout: '' }, 'refused'],
    [{ exitCode: 1, stderr: 'HTTP 401: Bad credentials', stdout: '' }, 'refused'],
    [
      { exitCode: 1, stderr: 'GraphQL: Could not resolve to a PullRequest with the number of 9.', stdout: '' },
      'refused',
    ],
  ])('reads %j as %s', (result, failure) => {
    expect(classifyFailure(result)).toBe(failure)
  })

  it('is the only place that runs gh: no other source names the gh binary', () => {
    const sources = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
        .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    const callers = [...sources('lib'), ...sources('scripts')].filter((file) => {
      // lib/ground/settings.ts reads PAIR_LOOP_GH (which program gh is) with the other settings; lib/ground/gh.ts runs it
      if (file === 'lib/ground/gh.ts' || file === 'lib/ground/settings.ts') return false
      const text = readFileSync(join(ROOT, file), 'utf8')
      return /ghBin\(|exec\w*\(\s*'gh'|PAIR_LOOP_GH\b/.test(text)
    })
    expect(callers).toEqual([])
  })
})
