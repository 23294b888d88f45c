// The repository is pinned at start (DESIGN.md, Authority): host and owner/name from the remote the base branch
// tracks, recorded on the run, and named in every gh call after, so a remote the coder adds later (with
// `gh-resolved = base`, which makes gh itself pick it) changes nothing. The fake gh (fixtures/gh) resolves a call that
// names no repository as gh does, from the checkout's remotes, and logs which repository each call asked about.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { naming } from '../lib/ground/gh.ts'
import { githubRepoOf } from '../lib/ground/github-repo.ts'
import { expectError, expectOk, startRun } from './_expect.ts'
import { FAKE_GH, world } from './_pr.ts'
import { git, recordReview, ROOT, sandbox, tempDir } from './_helpers.ts'

describe("a remote's URL", () => {
  it.each([
    ['https://github.com/acme/demo.git', 'github.com', 'acme/demo'],
    ['https://github.com/acme/demo', 'github.com', 'acme/demo'],
    ['https://github.com/acme/demo/', 'github.com', 'acme/demo'],
    ['git@github.com:acme/demo.git', 'github.com', 'acme/demo'],
    ['ssh://git@ssh.github.com:443/acme/demo.git', 'github.com', 'acme/demo'],
    ['https://user@GHE.example.com/team/tool.js.git', 'ghe.example.com', 'team/tool.js'],
  ])('%s is %s/%s', (url, host, repo) => {
    expect(githubRepoOf(url)).toEqual({ host, repo })
  })

  it.each([
    '/srv/git/demo.git',
    'file:///srv/git/demo.git',
    '../demo',
    'https://github.com/acme',
    'https://github.com/acme/demo/extra',
    'https://github.com/acme/..',
  ])('%s names no GitHub repository', (url) => {
    expect(githubRepoOf(url)).toBeNull()
  })
})

describe('a gh call', () => {
  const pinned = { host: 'github.com', repo: 'acme/demo' }

  it('of `gh pr` names the repository with --repo HOST/OWNER/NAME', () => {
    expect(naming(['pr', 'diff', '7', '--color', 'never'], pinned)).toEqual([
      ...['pr', 'diff', '7', '--color', 'never'],
      ...['--repo', 'github.com/acme/demo'],
    ])
  })

  it('of `gh api` names the host, and owner and name in the route and as GraphQL string fields', () => {
    expect(naming(['api', 'repos/{owner}/{repo}/pulls/7'], pinned)).toEqual([
      ...['api', '--hostname', 'github.com'],
      'repos/acme/demo/pulls/7',
    ])
    const numeric = { host: 'github.com', repo: 'acme/123' } // -F would send a repository named 123 as a number
    expect(naming(['api', 'graphql', '-f', 'query=q', '-F', 'owner={owner}', '-F', 'name={repo}'], numeric)).toEqual([
      ...['api', '--hostname', 'github.com', 'graphql', '-f', 'query=q'],
      ...['-f', 'owner=acme', '-f', 'name=123'],
    ])
  })

  it('that would leave a placeholder for gh to fill is a bug, never sent', () => {
    expect(() => naming(['api', '-F', 'x=/{owner}/'], pinned)).toThrow(/placeholder/)
  })
})

describe('start pins the repository', () => {
  it('from origin, the one remote of the repository', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    expect(sb.state(runId).github).toEqual({ host: 'github.com', repo: 'acme/demo' })
  })

  it("from the base branch's upstream, among several remotes", async () => {
    const sb = sandbox()
    git(sb.repo, ['remote', 'add', 'upstream', 'git@github.com:org/real.git'])
    git(sb.repo, ['config', 'branch.main.remote', 'upstream'])
    git(sb.repo, ['config', 'branch.main.merge', 'refs/heads/main'])
    const runId = expectOk(await sb.cli(['start', '--task', 't'])).run_id
    expect(sb.state(runId).github).toEqual({ host: 'github.com', repo: 'org/real' })
  })

  it('from the remote --base names', async () => {
    const sb = sandbox()
    git(sb.repo, ['remote', 'add', 'upstream', 'https://github.com/org/real.git'])
    git(sb.repo, ['update-ref', 'refs/remotes/upstream/main', 'HEAD'])
    const runId = expectOk(await sb.cli(['start', '--task', 't', '--base', 'upstream/main'])).run_id
    expect(sb.state(runId).github).toEqual({ host: 'github.com', repo: 'org/real' })
  })

  it.each([
    ['no remote at all', (repo: string) => git(repo, ['remote', 'remove', 'origin'])],
    [
      'a remote that is a local path',
      (repo: string) => git(repo, ['remote', 'set-url', 'origin', '/srv/git/demo.git']),
    ],
  ])('as none with %s: the run works locally', async (_name, arrange) => {
    const sb = sandbox()
    arrange(sb.repo)
    const runId = expectOk(await sb.cli(['start', '--task', 't'])).run_id
    expect(sb.state(runId).github).toBeNull()
    expectOk(await sb.cli(['status']))
  })
})

/** A run approved and committed, PR #7 on the fake GitHub (acme/demo) at the approved commit; `publish` moves it. */
async function approvedWithPr({ remote = true } = {}) {
  const sb = sandbox()
  if (!remote) git(sb.repo, ['remote', 'remove', 'origin'])
  const runId = await startRun(sb)
  writeFileSync(join(sb.repo, 'app.ts'), 'export const limit = 10\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'the limit']))
  await recordReview(sb.home, runId, 'VERDICT: APPROVED')
  git(sb.repo, ['add', 'app.ts'])
  git(sb.repo, ['commit', '-qm', 'the approved change'])
  const approved = git(sb.repo, ['rev-parse', 'HEAD']).trim()
  const ghDir = tempDir('pl-gh-')
  const worldFile = join(ghDir, 'world.json')
  const env = {
    PATH: `${FAKE_GH}${delimiter}${sb.env.PATH}`,
    FAKE_GH_DIR: ghDir,
    FAKE_GH_WORLD: worldFile,
    PAIR_LOOP_GH_RETRY_MS: '20',
  }
  const publish = (head: string, other: Record<string, unknown> = {}) =>
    writeFileSync(worldFile, JSON.stringify({ ...world({ pr: { ...world().pr, head } }), other_repos: other }))
  publish(approved)
  const repos = () =>
    existsSync(join(ghDir, 'repos.log'))
      ? readFileSync(join(ghDir, 'repos.log'), 'utf8').split('\n').filter(Boolean)
      : []
  return { sb, runId, approved, env, publish, repos, ghDir }
}

/** The coder's move: a remote of its own, marked as gh marks the base repository it chose. */
function addEvilRemote(repo: string) {
  git(repo, ['remote', 'add', 'evil', 'https://github.com/evil/fork.git'])
  git(repo, ['config', 'remote.evil.gh-resolved', 'base'])
}

describe('a remote the coder adds after start', () => {
  it('is the repository gh itself asks about when a call names none: the attack is real without the pin', () => {
    const sb = sandbox()
    addEvilRemote(sb.repo)
    const ghDir = tempDir('pl-gh-')
    spawnSync(join(ROOT, 'fixtures', 'gh', 'gh'), ['api', 'repos/{owner}/{repo}/pulls/7'], {
      cwd: sb.repo,
      env: { ...sb.env, FAKE_GH_DIR: ghDir },
    })
    expect(readFileSync(join(ghDir, 'repos.log'), 'utf8')).toBe('github.com/evil/fork resolved\n')
  })

  /** Finished with PR #7 at the approved commit; then an unreviewed commit pushed to it, the coder's fork holding a
   * PR #7 at the approved commit, and the coder's remote marked as gh's base. */
  async function pushedUnreviewedBehindAFork() {
    const t = await approvedWithPr()
    expectOk(await t.sb.cli(['finish', '--verdict', 'APPROVED', '--pr', '7'], { env: t.env }))
    writeFileSync(join(t.sb.repo, 'app.ts'), 'export const limit = 99\n')
    git(t.sb.repo, ['commit', '-qam', 'pushed but never reviewed'])
    t.publish(git(t.sb.repo, ['rev-parse', 'HEAD']).trim(), {
      'evil/fork': { pr: { ...world().pr, head: t.approved } },
    })
    addEvilRemote(t.sb.repo)
    return t
  }

  it("changes nothing for verify: it reads the pinned repository's PR, whose head no reviewer approved", async () => {
    const t = await pushedUnreviewedBehindAFork()
    const error = expectError(await t.sb.cli(['verify', '--pr', '7'], { env: t.env }), 'head_not_approved')
    expect(error).toMatchObject({ pr: 7, matches: false, paths: ['app.ts'] })
    expect(t.repos().filter((line) => !/^github\.com\/(acme\/demo named|\* node)$/.test(line))).toEqual([])
  })

  it('changes nothing for pr-check: it never says success for the unreviewed head', async () => {
    const t = await pushedUnreviewedBehindAFork()
    const result = await t.sb.cli(['pr-check'], { env: t.env })
    expect(result.json?.decision).not.toBe('success')
    expect(JSON.stringify(result.json)).toContain('head_not_approved')
    expect(t.repos().filter((line) => !/^github\.com\/(acme\/demo named|\* node)$/.test(line))).toEqual([])
  })
})

describe('a run started without a GitHub remote', () => {
  it.each([
    ['finish --create-pr', ['finish', '--verdict', 'APPROVED', '--create-pr']],
    ['verify --pr 7', ['verify', '--pr', '7']],
  ])(
    'asks gh nothing for %s, even once a remote is added: gh_error, not retryable, saying what to do',
    async (_name, args) => {
      const t = await approvedWithPr({ remote: false })
      expect(t.sb.state(t.runId).github).toBeNull()
      addEvilRemote(t.sb.repo)
      const error = expectError(await t.sb.cli(args, { env: t.env }), 'gh_error')
      expect(error).toMatchObject({ failure: 'no_repository', retryable: false })
      expect(error.message).toContain('git remote add origin')
      expect(t.repos()).toEqual([])
    },
  )
})
