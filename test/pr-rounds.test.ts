// Fixes after the PR are rounds (issue 36): a run whose PR is open takes coder-done and review again, an approval moves
// the approved tree on, the agent pushes, and pr-check / verify compare the PR head with the newest approved tree. The
// fake gh answers from the repository (fixtures/gh); the trees expected come from git itself, never from pair-loop.
import { dirname, join } from 'node:path'
import { mkdirSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { git, githubWithPrs, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, startRun } from './_expect.ts'
import { world } from './_pr.ts'

const APPROVE = ['--reviewer-cmd', 'builtin:approve']

/** A run approved and committed, its PR opened by `finish --create-pr`; then a fake GitHub world on that PR. */
async function openPr() {
  const sb = sandbox()
  const runId = await startRun(sb)
  writeFileSync(join(sb.repo, 'app.ts'), 'export const limit = 10\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'the limit']))
  expect(expectOk(await sb.cli(['review', ...APPROVE])).verdict).toBe('APPROVED')
  commit(sb, 'the approved change')
  const legacy = githubWithPrs(sb.repo, [])
  const opened = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED', '--create-pr'], { env: legacy }))
  // from here GitHub is a world file: the PR opened above, its head the commit pushed, its CI as the test sets it
  const worldFile = join(tempDir('pl-world-'), 'world.json')
  const env = { ...legacy, FAKE_GH_WORLD: worldFile }
  const setWorld = (ci: 'SUCCESS' | 'FAILURE') =>
    writeFileSync(
      worldFile,
      JSON.stringify(
        world({
          pr: { ...world().pr, number: opened.pr, url: opened.pr_url, head: head(sb), branch: 'main' },
          checks: [{ type: 'CheckRun', name: 'ci', status: 'COMPLETED', conclusion: ci, url: 'https://ci.example/1' }],
        }),
      ),
    )
  setWorld('FAILURE')
  const cli = (args: string[], input?: string) => sb.cli(args, { env, input })
  return { sb, runId, cli, setWorld }
}

const head = (sb: ReturnType<typeof sandbox>) => git(sb.repo, ['rev-parse', 'HEAD'], sb.env).trim()
const headTree = (sb: ReturnType<typeof sandbox>) => git(sb.repo, ['rev-parse', 'HEAD^{tree}'], sb.env).trim()
function commit(sb: ReturnType<typeof sandbox>, message: string) {
  git(sb.repo, ['add', '-A', '.'], sb.env)
  git(sb.repo, ['reset', '-q', 'HANDOFF.md'], sb.env)
  git(sb.repo, ['commit', '-qm', message], sb.env)
}

describe('fixes after the PR', () => {
  it('CI fails, the fix is handed over, reviewed, approved, pushed: pr-check success and verify ok on the new head', async () => {
    const t = await openPr()
    const first = expectOk(await t.cli(['pr-check']))
    expect(first).toMatchObject({ decision: 'keep_going', next: 'pr-check' })
    expect(first.ci.status).toBe('fail')

    writeFileSync(join(t.sb.repo, 'app.ts'), 'export const limit = 12\n') // the fix CI asked for
    const handed = expectOk(await t.cli(['coder-done', '--summary', 'fix the CI failure']))
    expect(handed).toMatchObject({ round: 2, next: 'review' })
    expect(t.sb.state(t.runId)).toMatchObject({ phase: 'reviewing', rounds: [{}, { pr_phase: true }] })

    const reviewed = expectOk(await t.cli(['review', ...APPROVE]))
    expect(reviewed).toMatchObject({ verdict: 'APPROVED', next: 'push' })
    expect(expectOk(await t.cli(['status'])).next).toBe('push')
    const state = t.sb.state(t.runId)
    expect(state.phase).toBe('finished')
    expect(state.outcome?.verdict).toBe('APPROVED')
    expect(state.approved_trees?.map((entry) => entry.round)).toEqual([1, 2])

    commit(t.sb, 'the reviewed fix')
    expect(state.approved_trees?.[1]?.tree).toBe(headTree(t.sb)) // what was approved is what git holds
    t.setWorld('SUCCESS') // the agent's push: GitHub's head is the new commit, and CI passes on it
    const after = expectOk(await t.cli(['pr-check']))
    expect(after).toMatchObject({ decision: 'success', next: null })
    expect(after.recurrence.fix_attempts).toBe(1)
    const verified = expectOk(await t.cli(['verify', '--no-require-vendor']))
    expect(verified).toMatchObject({ matches: true, head: head(t.sb), head_tree: headTree(t.sb) })
    expect(verified.approved_tree).toBe(headTree(t.sb))
  })

  it('answers a push no review saw with next coder-done and the paths, never a dead end', async () => {
    const t = await openPr()
    writeFileSync(join(t.sb.repo, 'app.ts'), 'export const limit = 99\n')
    commit(t.sb, 'pushed without a review')
    t.setWorld('SUCCESS')
    const checked = expectOk(await t.cli(['pr-check']))
    expect(checked).toMatchObject({ decision: 'escalate', next: 'coder-done', changed_paths: ['app.ts'] })
    expect(checked.ask).toBeUndefined()
    expect(expectOk(await t.cli(['status'])).next).toBe('coder-done')
    const error = expectError(await t.cli(['verify', '--no-require-vendor']), 'head_not_approved')
    expect(error).toMatchObject({ next: 'coder-done', paths: ['app.ts'] })
    expect(
      expectError(await t.cli(['finish', '--verdict', 'APPROVED', '--pr', String(error.pr)]), 'head_not_approved'),
    ).toMatchObject({ next: 'coder-done', paths: ['app.ts'] })
    // and the way on works: hand it over, have it reviewed, and the same head is approved
    expectOk(await t.cli(['coder-done', '--summary', 'the pushed change, for review']))
    expectOk(await t.cli(['review', ...APPROVE]))
    expect(expectOk(await t.cli(['pr-check']))).toMatchObject({ decision: 'success' })
  })

  it('calls an older approved tree on the PR head head_not_approved too, and names the newest', async () => {
    const t = await openPr()
    const older = headTree(t.sb)
    writeFileSync(join(t.sb.repo, 'app.ts'), 'export const limit = 12\n')
    expectOk(await t.cli(['coder-done', '--summary', 'fix']))
    expectOk(await t.cli(['review', ...APPROVE]))
    // not pushed yet: GitHub's head is still round 1's approved tree
    const checked = expectOk(await t.cli(['pr-check']))
    expect(checked).toMatchObject({ decision: 'escalate', next: 'push' })
    const error = expectError(await t.cli(['verify', '--no-require-vendor']), 'head_not_approved')
    expect(error.head_tree).toBe(older)
    expect(error.approved_tree).not.toBe(older)
    expect(error.next).toBe('push')
  })

  it('caps the rounds after the PR at pr_max_rounds, apart from max_rounds, and asks the person', async () => {
    const t = await openPr()
    for (const limit of [11, 12, 13]) {
      writeFileSync(join(t.sb.repo, 'app.ts'), `export const limit = ${limit}\n`)
      expectOk(await t.cli(['coder-done', '--summary', `try ${limit}`]))
      expectOk(await t.cli(['review', '--reviewer-cmd', 'builtin:changes']))
      if (limit < 13) {
        for (const id of [`${t.sb.state(t.runId).rounds.length}.1`, `${t.sb.state(t.runId).rounds.length}.2`])
          expectOk(await t.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], 'done'))
      }
    }
    const status = expectOk(await t.cli(['status']))
    expect(status).toMatchObject({ phase: 'capped', next: 'ask-user' })
    expect(status.ask.reason).toBe('round_cap')
    expect(status.ask.choices.map((c: { command: string }) => c.command)).toContain(
      'pair-loop coder-done --over-cap --summary-file -',
    )
  })
})

describe('a stalemate through the CLI', () => {
  /** Round 1 asks for changes on src/a.ts and src/a.test.ts; the coder answers, edits `edited`, hands over again. */
  async function secondReview(edited: string) {
    const sb = sandbox()
    await startRun(sb)
    expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
    expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
    for (const id of ['1.1', '1.2'])
      expectOk(await sb.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], { input: 'ok' }))
    mkdirSync(dirname(join(sb.repo, edited)), { recursive: true })
    writeFileSync(join(sb.repo, edited), 'export const touched = 2\n')
    expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
    return expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
  }

  it('asks the person when the same findings come back and no file they name changed', async () => {
    const second = await secondReview('unrelated.ts')
    expect(second).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'ask-user', ask: { reason: 'stalemate' } })
  })

  it('goes on with reply when a file a finding names changed', async () => {
    const second = await secondReview('src/a.ts')
    expect(second).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply' })
  })
})
