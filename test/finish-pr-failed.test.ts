// A `finish --create-pr` whose gh call fails has finished the run and written its PR body all the same: the error
// says so, and that the same command again is the way on; gh missing or not logged in is said in a person's words.
import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { git, githubWithPrs, recordReview, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, startRun } from './_expect.ts'

/** A run whose change was handed over, approved and committed as approved: ready for `finish --create-pr`. */
async function approvedRun() {
  const sb = sandbox()
  const runId = await startRun(sb)
  writeFileSync(join(sb.repo, 'app.ts'), 'export const limit = 10\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'the limit']))
  await recordReview(sb.home, runId, 'VERDICT: APPROVED')
  git(sb.repo, ['add', 'app.ts'], sb.env)
  git(sb.repo, ['commit', '-qm', 'the approved change'], sb.env)
  return { sb, runId }
}

/** A `gh` that answers every call as gh does when no one ever ran `gh auth login`. */
function loggedOutGh(): string {
  const path = join(tempDir('pl-gh-out-'), 'gh')
  writeFileSync(path, '#!/bin/sh\necho "To get started with GitHub CLI, please run:  gh auth login" >&2\nexit 4\n')
  chmodSync(path, 0o755)
  return path
}

const FINISH = ['finish', '--verdict', 'APPROVED', '--create-pr']

describe('finish --create-pr when gh fails', () => {
  it('says the run is finished, where its PR body is, and to run the same command again, which opens the PR', async () => {
    const { sb, runId } = await approvedRun()
    const missing = { PAIR_LOOP_GH: 'gh-not-installed-here' } // not on PATH: what a machine without gh has
    const error = expectError(await sb.cli(FINISH, { env: missing }), 'gh_error')
    expect(error.message).toMatch(/^the PR was not opened: /)
    expect(error.message).toContain(
      `Run ${runId} is finished (APPROVED) and its PR body is written (${error.pr_body_path})`,
    )
    expect(error.message).toContain(
      'run the same command again to open the PR: `pair-loop finish --verdict APPROVED --create-pr`',
    )
    expect(error).toMatchObject({ run_id: runId, finished: true, next: 'finish' })
    expect(existsSync(error.pr_body_path)).toBe(true)
    expect(sb.state(runId).phase).toBe('finished')
    const opened = expectOk(await sb.cli(FINISH, { env: githubWithPrs(sb.repo, []) }))
    expect(opened).toMatchObject({ run_id: runId, pr: 42 })
  })

  it("says gh is not installed in a person's words, not the shell's", async () => {
    const { sb } = await approvedRun()
    const result = await sb.cli(FINISH, { env: { PAIR_LOOP_GH: 'gh-not-installed-here' } })
    const error = expectError(result, 'gh_error')
    expect(error.message).toContain(
      'gh is not installed here (or not on PATH): install the GitHub CLI from https://cli.github.com, then run `gh auth login`',
    )
    for (const said of [error.message, result.stderr]) expect(said).not.toMatch(/command not found|No such file|bash/)
  })

  it('says gh is not logged in, and how to log in', async () => {
    const { sb } = await approvedRun()
    const error = expectError(await sb.cli(FINISH, { env: { PAIR_LOOP_GH: loggedOutGh() } }), 'gh_error')
    expect(error.message).toContain('the PR was not opened: gh is not logged in to GitHub: run `gh auth login`.')
    expect(error.message).not.toContain('To get started with GitHub CLI')
  })
})
