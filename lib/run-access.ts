// Which run a command means (`--run`, or the active run of the repository here), and changing it under its lock
// with HANDOFF.md re-rendered from what was written.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, loadConfig, readConfig, REPO_CONFIG_NAME } from './config.ts'
import { fail } from './errors.ts'
import { writeFileAtomic } from './fsutil.ts'
import { currentBranch, findTopLevelFast, HANDOFF_NAME } from './git.ts'
import { renderHandoff } from './handoff.ts'
import { checkHomeOutside, checkRunId, configPath, pairLoopHome } from './paths.ts'
import { isActive } from './run-queries.ts'
import type { RunState } from './state.ts'
import { toStderr } from './stdio.ts'
import { listRuns, readRun, updateRun } from './store.ts'

/** A repository's runs, newest first; an unreadable one of it is an error, never skipped as if it did not exist. */
export function runsOfRepo(repo: string, home = pairLoopHome()): RunState[] {
  const listed = listRuns(home)
  const damaged = listed.find((entry) => 'error' in entry && entry.repo === repo)
  if (damaged && 'error' in damaged) throw damaged.error
  return listed.flatMap((entry) => ('state' in entry && entry.state.repo === repo ? [entry.state] : []))
}

/** `--run` if given, else the one active run whose repository is the one around `cwd`. */
export function resolveRun(
  { run, cwd }: { run?: string; cwd?: string },
  { allowFinished = false, home = pairLoopHome() } = {},
): RunState {
  if (run !== undefined) return readRun(checkRunId(run), home)
  const dir = cwd ?? process.cwd()
  const top = findTopLevelFast(dir)
  if (!top) fail('run_not_found', `${dir} is not inside a git repository, and no --run was given`, { cwd: dir })
  checkHomeOutside(top, home)
  const runs = runsOfRepo(top, home)
  const here = runs.filter(isActive)
  // finish, status and friends may look back at the newest finished run (by when it started) when none is active
  const newest = runs.reduce<RunState | undefined>((a, b) => (a && a.created_at >= b.created_at ? a : b), undefined)
  if (here.length === 0 && allowFinished && newest) return newest
  if (here.length === 0)
    fail('run_not_found', `no active run in ${top}; start one with \`pair-loop start --task ...\` or pass --run`, {
      repo: top,
    })
  if (here.length > 1)
    fail('usage', `${here.length} active runs in ${top}; pass --run`, {
      repo: top,
      run_ids: here.map((r) => r.run_id),
    })
  return here[0]!
}

export const handoffPath = (run: Pick<RunState, 'repo'>) => join(run.repo, HANDOFF_NAME)

/** HANDOFF.md follows state on every write; a repository that vanished doesn't fail the state change. */
export function writeHandoff(run: RunState): void {
  if (!existsSync(run.repo)) return
  try {
    writeFileAtomic(handoffPath(run), renderHandoff(run), 0o644)
  } catch (error) {
    toStderr(`pair-loop: warning: could not write ${handoffPath(run)}: ${(error as Error).message}\n`)
  }
}

/**
 * Change a run under its lock and re-render HANDOFF.md from what was written. HANDOFF.md belongs to the repository's
 * active run: a run that was already finished (a later `finish --pr`, `reply --post-pr`) never rewrites it.
 */
export function changeRun<T>(
  id: string,
  mutate: Parameters<typeof updateRun<T>>[1],
  home = pairLoopHome(),
): Promise<T> {
  return updateRun(id, mutate, {
    home,
    afterWrite: (next, previous) => {
      if (previous === null || isActive(previous)) writeHandoff(next)
    },
  })
}

/** The work reviewed and the PR's head must be one branch: on another one, `branch_moved`. */
export async function checkBranch(run: RunState, command: string): Promise<void> {
  const actual = await currentBranch(run.repo)
  if (actual !== run.branch)
    fail(
      'branch_moved',
      `run ${run.run_id} works on branch ${run.branch}, but ${run.repo} is on ${actual}; switch back (\`git switch ${run.branch}\`) before ${command}`,
      { run_id: run.run_id, expected: run.branch, actual },
    )
}

/** A HANDOFF.md that no pair-loop run of this repository rendered is the person's: never overwritten. */
export function foreignHandoff(repo: string, runs: RunState[]): string | null {
  const path = join(repo, HANDOFF_NAME)
  let first: string
  try {
    first = readFileSync(path, 'utf8').slice(0, 200).split('\n')[0]!
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    return path
  }
  const id = /^# Pair-Loop Handoff — (\S+)$/.exec(first)?.[1]
  return id && runs.some((run) => run.run_id === id) ? null : path
}

export const nowIso = () => new Date().toISOString()

/** The config a run goes by: the one frozen at its start, so a file changed mid-run moves nothing; a run started
 * before runs froze theirs reads it live. */
export function configOf(run: RunState, home = pairLoopHome()): Config {
  return run.config ?? loadConfig({ repo: run.repo, home })
}

/** Whether a config file the run started under changed (or one appeared or went) since: `status` says so. */
export function configChanged(run: RunState, home = pairLoopHome()): boolean | null {
  if (!run.config) return null
  const now = [configPath(home), join(run.repo, REPO_CONFIG_NAME)].flatMap((path) => {
    try {
      const file = readConfig(path)
      return file ? [`${file.path}:${file.sha256}`] : []
    } catch {
      return [`${path}:unreadable`]
    }
  })
  const then = run.config.sources.map((source) => `${source.path}:${source.sha256}`)
  return now.join('\n') !== then.join('\n')
}
