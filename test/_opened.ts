// A run opened as `start` opens it, without asking git what a fresh copy of the repository template already says:
// start's six git processes (its repository, its base, a clean tree) for each of the many tests that need a started
// run, not a test of start. start.test.ts shows the two open the same run.
import { existsSync, lstatSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { withContext } from '../lib/ground/context.ts'
import { configAtBase, openRun } from '../lib/commands/start.ts'
import { pinGitHubRepo } from '../lib/ground/github-repo.ts'
import { callerGitIsInert } from '../lib/snapshot/verified.ts'
import { testContext } from './_helpers.ts'
import type { Sandbox } from './_expect.ts'

/**
 * The commit the sandbox's repository has checked out on main, when everything start would ask git is plain in its
 * files: `.git` a folder, HEAD on main at a loose ref, no packed refs, no remote (origin/HEAD would name the base), no
 * GIT_* variable that could move the git dir git finds (lib/snapshot/verified.ts). Null otherwise: the caller runs
 * start itself.
 */
function plainMainHead(sb: Sandbox): string | null {
  const gitDir = join(sb.repo, '.git')
  if (!lstatSync(gitDir, { throwIfNoEntry: false })?.isDirectory()) return null
  if (!callerGitIsInert(sb.env)) return null
  if (existsSync(join(gitDir, 'packed-refs')) || existsSync(join(gitDir, 'refs', 'remotes'))) return null
  if (readFileSync(join(gitDir, 'HEAD'), 'utf8') !== 'ref: refs/heads/main\n') return null
  const main = join(gitDir, 'refs', 'heads', 'main')
  const sha = existsSync(main) ? readFileSync(main, 'utf8').trim() : ''
  return /^[0-9a-f]{40}$/.test(sha) ? sha : null
}

/**
 * `pair-loop start --task <task>` in the sandbox's (clean) repository, opened from its files: the run's id, or null
 * when the repository is not plain enough to say (the caller then runs start).
 */
export async function openedAsStartWould(sb: Sandbox, task: string): Promise<string | null> {
  const head = plainMainHead(sb)
  if (head === null) return null
  const { ctx } = testContext({ cwd: sb.repo, env: sb.env })
  return withContext(ctx, async () => {
    // on main, the base is HEAD itself (lib/ground/review-base.ts), and the branch is main
    const base = { sha: head, branch: 'main' }
    const config = await configAtBase(sb.repo, head)
    const github = await pinGitHubRepo(sb.repo, { rev: null, branch: 'main' }) // one process: remotes are config
    const excludeFile = join(sb.repo, '.git', 'info', 'exclude')
    const place = { repo: sb.repo, base, config, branch: 'main', excludeFile, github }
    return (await openRun(ctx, { task }, place)).run_id
  })
}
