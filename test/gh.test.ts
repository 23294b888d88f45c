// finish --create-pr and reply --post-pr through a fake `gh` on PATH that records its argv and answers like gh.
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { GITHUB_BODY_LIMIT, renderPrBody } from '../lib/pr/body.ts'
import type { RunState } from '../lib/run/state.ts'
import { ROOT, recordReview, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, reviewWith, runDisk, runInReview } from './_expect.ts'
import { pathWithout } from './_path.ts'

const FAKE_GH_BIN = join(ROOT, 'fixtures', 'gh')

/** A sandbox whose PATH finds the fake gh first; its calls land in `ghDir`. */
function ghSandbox({ fail = false, withGh = true } = {}) {
  const sb = sandbox()
  const ghDir = tempDir('pl-gh-')
  const path = withGh ? `${FAKE_GH_BIN}${delimiter}${sb.env.PATH}` : sb.env.PATH
  const env = { PATH: path, FAKE_GH_DIR: ghDir, ...(fail ? { FAKE_GH_FAIL: '1' } : {}) }
  const cli = (args: string[], options: { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
    sb.cli(args, { ...options, env: { ...env, ...options.env } })
  const calls = () =>
    existsSync(join(ghDir, 'calls.log'))
      ? readFileSync(join(ghDir, 'calls.log'), 'utf8')
          .split('--\n')
          .filter(Boolean)
          .map((call) => call.trimEnd().split('\n'))
      : []
  const comments = () =>
    readdirSync(ghDir)
      .filter((name) => name.startsWith('comment-'))
      .sort()
      .map((name) => readFileSync(join(ghDir, name), 'utf8'))
  return { ...sb, cli, calls, comments, ghDir }
}

async function approvedRun(sb: ReturnType<typeof ghSandbox>): Promise<string> {
  const runId = await runInReview(sb)
  await recordReview(sb.home, runId, `${reviewWith(2, 'APPROVED')}`)
  return runId
}

describe('finish --create-pr', () => {
  it('opens the PR once with the task as title and the PR body file, and records number and URL', async () => {
    const sb = ghSandbox()
    const runId = await approvedRun(sb)
    const doc = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr']))
    expect(doc).toMatchObject({ run_id: runId, pr: 42, pr_url: 'https://github.com/acme/demo/pull/42' })
    const [call] = sb.calls()
    expect(call!.slice(0, 2)).toEqual(['pr', 'create'])
    expect(call![call!.indexOf('--title') + 1]).toBe('demo task')
    expect(call![call!.indexOf('--body-file') + 1]).toBe(doc.pr_body_path)
    expect(call).not.toContain('--draft')
    expect(sb.state(runId)).toMatchObject({ phase: 'finished', pr: 42, pr_url: 'https://github.com/acme/demo/pull/42' })
  })

  it('reports the recorded PR on a second call without creating another', async () => {
    const sb = ghSandbox()
    await approvedRun(sb)
    const first = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr']))
    const second = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr']))
    expect(second).toEqual(first)
    // one PR opened; the rest are the reads that compare GitHub's head with the approved tree
    expect(sb.calls().filter((call) => call[0] === 'pr' && call[1] === 'create')).toHaveLength(1)
    expect(sb.calls().filter((call) => call[0] !== 'api')).toHaveLength(1)
  })

  it('passes --draft and the base branch named at start', async () => {
    const sb = ghSandbox()
    const runId = await runInReview(sb, ['--base', 'main'])
    await recordReview(sb.home, runId, 'VERDICT: APPROVED')
    expectOk(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr', '--draft']))
    const [call] = sb.calls()
    expect(call).toContain('--draft')
    expect(call![call!.indexOf('--base') + 1]).toBe('main')
  })

  it.each([
    [['--draft'], '--draft'],
    [['--create-pr', '--pr', '7'], '--create-pr'],
  ])('refuses %j as usage without calling gh', async (extra, flag) => {
    const sb = ghSandbox()
    await approvedRun(sb)
    const error = expectError(await sb.cli(['finish', '--verdict', 'APPROVED', ...extra]), 'usage')
    expect(error.flag).toBe(flag)
    expect(sb.calls()).toHaveLength(0)
  })

  it("turns gh's failure into gh_error with gh's own message and leaves the run finished and retriable", async () => {
    const sb = ghSandbox({ fail: true })
    const runId = await approvedRun(sb)
    const error = expectError(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr']), 'gh_error')
    expect(error.message).toContain('HTTP 502: Bad Gateway')
    expect(error.retryable).toBe(true)
    expect(sb.state(runId)).toMatchObject({ phase: 'finished', pr: null, pr_url: null })
    const retried = expectOk(
      await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr'], { env: { FAKE_GH_FAIL: '0' } }),
    )
    expect(retried.pr).toBe(42)
  })

  it('says gh is missing when it is not on PATH', async () => {
    const sb = ghSandbox({ withGh: false })
    const runId = await approvedRun(sb)
    // this machine's PATH without gh: a gh installed here (/usr/bin/gh) is not on it
    const PATH = pathWithout(['gh'])
    const error = expectError(
      await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr'], { env: { PATH } }),
      'gh_error',
    )
    expect(error.message).toMatch(/gh is not installed/)
    expect(sb.state(runId).phase).toBe('finished')
  })
})

describe('reply --post-pr', () => {
  async function runWithPr(sb: ReturnType<typeof ghSandbox>) {
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(2))
    return runId
  }

  it('posts the answer as a PR comment through a body file and records the comment URL', async () => {
    const sb = ghSandbox()
    const runId = await runWithPr(sb)
    expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED', '--pr', '42']))
    const body = "Not a bug: the bound is inclusive by design; see `$HOME` and 'quotes'."
    const doc = expectOk(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'wont-fix', '--body-file', '-', '--post-pr'], {
        input: body,
      }),
    )
    expect(doc).toMatchObject({
      finding: '1.1',
      disposition: 'wont-fix',
      posted: true,
      comment_url: 'https://github.com/acme/demo/pull/42#issuecomment-1000',
    })
    const [call] = sb.calls()
    // the run's repository, pinned at start, named by the call (never left to gh's {owner}/{repo} and the remotes)
    expect(call!.slice(0, 6)).toEqual([
      'api',
      '--hostname',
      'github.com',
      '--method',
      'POST',
      'repos/acme/demo/issues/42/comments',
    ])
    expect(call!.join('\n')).not.toContain('inclusive by design') // the body never enters argv
    expect(sb.comments()[0]).toContain(body)
    expect(sb.comments()[0]).toContain('finding 1.1')
    expect(sb.state(runId).replies['1.1']!.comment_url).toBe(doc.comment_url)
  })

  it('posts once per finding: a second post is duplicate_reply with what is recorded', async () => {
    const sb = ghSandbox()
    await runWithPr(sb)
    expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED', '--pr', '42']))
    expectOk(
      await sb.cli(['reply', '--finding', '1.2', '--disposition', 'fixed', '--body-file', '-', '--post-pr'], {
        input: 'done',
      }),
    )
    const error = expectError(
      await sb.cli(['reply', '--finding', '1.2', '--disposition', 'fixed', '--body-file', '-', '--post-pr'], {
        input: 'again',
      }),
      'duplicate_reply',
    )
    expect(error.recorded.comment_url).toMatch(/issuecomment-1000$/)
    expect(sb.calls()).toHaveLength(1)
  })

  it('retries a failed post with the recorded answer', async () => {
    const sb = ghSandbox()
    const runId = await runWithPr(sb)
    expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED', '--pr', '42']))
    expectError(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'question', '--body-file', '-', '--post-pr'], {
        input: 'why?',
        env: { FAKE_GH_FAIL: '1' },
      }),
      'gh_error',
    )
    expect(sb.state(runId).replies['1.1']).toMatchObject({ disposition: 'question', body: 'why?', comment_url: null })
    const retried = expectOk(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'question', '--body-file', '-', '--post-pr'], {
        input: 'why?',
      }),
    )
    expect(retried.posted).toBe(true)
    expect(sb.comments()).toHaveLength(1)
  })

  it('needs a PR recorded on the run', async () => {
    const sb = ghSandbox()
    await runWithPr(sb)
    const before = runDisk(sb)
    const error = expectError(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'ack', '--body-file', '-', '--post-pr'], {
        input: 'ok',
      }),
      'usage',
    )
    expect(error.flag).toBe('--post-pr')
    expect(runDisk(sb)).toEqual(before)
  })
})

describe('the PR body', () => {
  it("stays within GitHub's 65,536 characters, shortening the transcript in the middle and never the summary", async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    let state = await recordReview(sb.home, runId, reviewWith(3))
    state = structuredClone(state) as RunState
    for (const round of state.rounds)
      round.coder.summary = `start of round ${round.n}\n${'x'.repeat(70_000)}\nend of round ${round.n}`
    state.rounds.push({ ...structuredClone(state.rounds[0]!), n: 2 })
    const body = renderPrBody(state, { total_usd: 1.25, by_round: { 1: 1, 2: 0.25 } })
    expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT)
    expect(body.startsWith('## demo task\n')).toBe(true)
    expect(body).toContain('**Total cost:** $1.2500')
    expect(body).toMatch(/characters of the transcript cut here/)
    expect(body).toContain('# Pair-Loop Handoff')
    expect(body.trimEnd().endsWith('</details>')).toBe(true)
  })
})
