// The review's base (DESIGN.md, the snapshot): where `start` says the change begins.
import { fail } from './errors.ts'
import { headSha, plainGitTry } from './git.ts'
import { unknownBase } from './git-messages.ts'

/**
 * The review's base: where HEAD's history meets the PR's base branch (`rev`, else the default branch), so commits
 * made on the branch before `start` are reviewed too. The branch is named when `rev` is one (local or remote).
 */
export async function reviewBase(cwd: string, rev: string | null): Promise<{ sha: string; branch: string | null }> {
  const head = await headSha(cwd)
  const target = rev ? await namedBase(cwd, rev) : await defaultBranch(cwd)
  if (!target) return { sha: head, branch: null }
  // HEAD at the branch's own commit: that commit is where the two meet (git's merge-base of a commit with itself)
  if (target.tip === head) return { sha: head, branch: target.name }
  const merged = await plainGitTry(cwd, ['merge-base', head, target.ref])
  if (!merged.ok)
    fail('git_error', `HEAD and ${rev ?? target.name} have no commit in common: give the base with --base`, {
      flag: '--base',
      base: rev ?? target.name,
    })
  return { sha: merged.stdout.trim(), branch: target.name }
}

/** The base `--base` names: its commit (git_error naming the flag when there is none), and its branch name if it is one. */
async function namedBase(cwd: string, rev: string): Promise<BaseTarget> {
  const result = await plainGitTry(cwd, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`])
  if (!result.ok) unknownBase(cwd, rev, result)
  const sha = result.stdout.trim()
  return { ref: sha, tip: sha, name: await branchName(cwd, rev) }
}

/** The commit the local branch `name` points at, or null when there is no such branch. */
async function localBranchTip(cwd: string, name: string): Promise<string | null> {
  const result = await plainGitTry(cwd, ['rev-parse', '--verify', '--quiet', `refs/heads/${name}`])
  return result.ok ? result.stdout.trim() : null
}

/** A branch to meet HEAD at: its name, the ref to give git, and its commit when that is already known. */
interface BaseTarget {
  name: string | null
  ref: string
  tip?: string
}

/**
 * The branch a PR of this work would go into when none is named: the remote's default (origin/HEAD), else a local
 * main or master. Null: none (the review's base is then HEAD itself).
 */
async function defaultBranch(cwd: string): Promise<BaseTarget | null> {
  const remote = await plainGitTry(cwd, ['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'])
  const ref = remote.ok ? remote.stdout.trim() : ''
  if (ref.startsWith('refs/remotes/origin/')) return { name: ref.slice('refs/remotes/origin/'.length), ref }
  for (const name of ['main', 'master']) {
    const tip = await localBranchTip(cwd, name)
    if (tip !== null) return { name, ref: `refs/heads/${name}`, tip }
  }
  return null
}

/** A branch name for `rev`: a local branch itself, or a remote-tracking branch without its remote. */
async function branchName(cwd: string, rev: string): Promise<string | null> {
  if ((await localBranchTip(cwd, rev)) !== null) return rev
  const remote = await plainGitTry(cwd, ['rev-parse', '--verify', '--quiet', '--symbolic-full-name', rev])
  const match = /^refs\/remotes\/[^/]+\/(.+)$/.exec(remote.stdout.trim())
  return match ? match[1]! : null
}
