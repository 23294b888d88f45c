// How many git processes a command's questions about its repository cost: each answer taken from a call already made
// is the one git gives when asked alone, and where that cannot be shown the question is asked alone as before. git is
// run through a wrapper on the PATH that logs each call, so the count is the processes started, not a guess.
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { withContext } from '../lib/ground/context.ts'
import { factsFrom, topLevel } from '../lib/ground/git.ts'
import { reviewBase } from '../lib/ground/review-base.ts'
import { repoGit } from '../lib/snapshot/snapshot.ts'
import { callerGitIsInert } from '../lib/snapshot/verified.ts'
import { git, isolatedEnv, makeRepo, tempDir, testContext } from './_helpers.ts'

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim()

/** An environment whose `git` logs its arguments (one line a call) before running the real one. */
function loggingGit(extra: Record<string, string> = {}) {
  const bin = tempDir('pl-gitlog-')
  const log = join(bin, 'calls')
  writeFileSync(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${REAL_GIT}' "$@"\n`, {
    mode: 0o755,
  })
  writeFileSync(log, '')
  const env = isolatedEnv({ PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, ...extra })
  const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean)
  return {
    env,
    revParses: () => calls().filter((call) => / rev-parse /.test(call)),
    mergeBases: () => calls().filter((call) => / merge-base /.test(call)),
  }
}

/** The snapshot's repository as the command in `cwd` asks it, after the command asked its top level. */
function askedInOneCommand(cwd: string, env: NodeJS.ProcessEnv) {
  return withContext(testContext({ cwd, env }).ctx, async () => {
    await topLevel(cwd)
    return repoGit(cwd)
  })
}

/** What git says of the git dir and format asked alone, as the snapshot asked before. */
function askedAlone(repo: string) {
  const [gitDir, format] = git(repo, ['rev-parse', '--absolute-git-dir', '--show-object-format']).trim().split('\n')
  return { repo, gitDir, format }
}

describe("a snapshot's git dir and object format", () => {
  it('come from the one rev-parse that answered the top level: no second process', async () => {
    const repo = makeRepo()
    const gitLog = loggingGit()
    expect(await askedInOneCommand(repo, gitLog.env)).toEqual(askedAlone(repo))
    expect(askedAlone(repo).gitDir).toBe(join(repo, '.git'))
    expect(gitLog.revParses()).toHaveLength(1)
  })

  it('come from that one rev-parse on a machine that sets how git reaches a remote (GIT_SSL_CAINFO, GIT_SSH_COMMAND)', async () => {
    const repo = makeRepo()
    const gitLog = loggingGit({ GIT_SSL_CAINFO: '/etc/ssl/certs/ca-certificates.crt', GIT_SSH_COMMAND: 'ssh -i key' })
    expect(await askedInOneCommand(repo, gitLog.env)).toEqual(askedAlone(repo))
    expect(gitLog.revParses()).toHaveLength(1)
  })

  it('are asked alone in a linked worktree, whose git dir is not its own .git folder', async () => {
    const repo = makeRepo()
    const worktree = join(tempDir('pl-wt-'), 'wt')
    git(repo, ['worktree', 'add', '-q', worktree])
    const gitLog = loggingGit()
    const asked = await askedInOneCommand(worktree, gitLog.env)
    expect(asked).toEqual(askedAlone(worktree))
    expect(asked.gitDir).toBe(join(repo, '.git', 'worktrees', 'wt'))
    expect(gitLog.revParses()).toHaveLength(2)
  })

  it.each([
    ['GIT_DIR', { GIT_DIR: '.git' }],
    [
      'config that decides the opening',
      { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' },
    ],
  ])('are asked alone, without the GIT_* variables, when the caller sets %s', async (_, extra) => {
    const repo = makeRepo()
    const gitLog = loggingGit(extra)
    expect(await askedInOneCommand(repo, gitLog.env)).toEqual(askedAlone(repo))
    expect(gitLog.revParses()).toHaveLength(2)
  })
})

describe('the GIT_* variables a snapshot may share an answer under', () => {
  it('are the author, the system config left out and config outside safe and include', () => {
    expect(callerGitIsInert(isolatedEnv())).toBe(true)
    expect(callerGitIsInert({ PATH: '/bin', GIT_AUTHOR_DATE: '@0 +0000', GIT_COMMITTER_DATE: '@0 +0000' })).toBe(true)
  })

  it('are how to reach a remote or a person: TLS, ssh, prompts, pager and editor (a machine may set them for all)', () => {
    const transport = {
      GIT_SSL_CAINFO: '/etc/ssl/certs/ca-certificates.crt',
      GIT_SSL_NO_VERIFY: '1',
      GIT_SSH_COMMAND: 'ssh -i key',
      GIT_ASKPASS: '/bin/false',
      GIT_TERMINAL_PROMPT: '0',
      GIT_PAGER: 'cat',
      GIT_EDITOR: 'true',
    }
    expect(callerGitIsInert({ ...isolatedEnv(), ...transport })).toBe(true)
  })

  it.each([
    { GIT_DIR: '/elsewhere/.git' },
    { GIT_WORK_TREE: '/elsewhere' },
    { GIT_CEILING_DIRECTORIES: '/' },
    { GIT_CONFIG_PARAMETERS: "'safe.directory'='*'" },
    { GIT_CONFIG_GLOBAL: '/elsewhere/config' },
    { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'Safe.Directory', GIT_CONFIG_VALUE_0: '*' },
    { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'include.path', GIT_CONFIG_VALUE_0: '/elsewhere' },
    { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'includeIf.gitdir:/x/.path', GIT_CONFIG_VALUE_0: '/elsewhere' },
  ])('are not %o', (variables) => {
    expect(callerGitIsInert({ ...isolatedEnv(), ...variables })).toBe(false)
  })
})

describe("the combined rev-parse's answer", () => {
  const printed = (format: string) =>
    ['/r', '.git/info/exclude', '/r/.git', format, 'a'.repeat(40), 'refs/heads/main', '--', ''].join('\n')

  it('holds the layout when git printed it plainly', () => {
    expect(factsFrom(printed('sha256'))?.layout).toEqual({ gitDir: '/r/.git', format: 'sha256' })
  })

  it('keeps the other facts, without a layout, from a git too old to know --show-object-format (it echoes it)', () => {
    expect(factsFrom(printed('--show-object-format'))).toEqual({
      topLevel: '/r',
      excludePath: '.git/info/exclude',
      head: 'a'.repeat(40),
      branch: 'main',
      layout: null,
    })
  })
})

describe("the review's base", () => {
  it.each([
    ['at the tip of main: HEAD itself, with no merge-base process', null, 0],
    ['a commit past main on a branch: where they meet, asked of git merge-base', 'feature', 1],
  ])('of a HEAD %s', async (_, branch, processes) => {
    const repo = makeRepo()
    if (branch) {
      git(repo, ['checkout', '-qb', branch])
      writeFileSync(join(repo, 'more.txt'), 'more\n')
      git(repo, ['add', 'more.txt'])
      git(repo, ['commit', '-qm', 'more'])
    }
    const gitLog = loggingGit()
    const base = await withContext(testContext({ cwd: repo, env: gitLog.env }).ctx, () => reviewBase(repo, null))
    expect(base).toEqual({ sha: git(repo, ['merge-base', 'HEAD', 'main']).trim(), branch: 'main' })
    expect(gitLog.mergeBases()).toHaveLength(processes)
  })
})
