// Which run a command means (`--run`, or the active run of the repository here), and changing it under its lock
// with HANDOFF.md re-rendered from what was written.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, loadConfig, readConfig, REPO_CONFIG_NAME } from './config.ts'
import { fail } from './errors.ts'
import { writeFileAtomic } from './fsutil.ts'
import { findTopLevelFast, HANDOFF_NAME } from './git.ts'
import { renderHandoff } from './handoff.ts'
import { checkRunId, configPath, pairLoopHome } from './paths.ts'
import { isActive } from './run-queries.ts'
import type { RunState } from './state.ts'
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
  const runs = runsOfRepo(top, home)
  const here = runs.filter(isActive)
  // finish, status and friends may look back at the newest finished run when none is active
  if (here.length === 0 && allowFinished && runs[0]) return runs[0]
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
    process.stderr.write(`pair-loop: warning: could not write ${handoffPath(run)}: ${(error as Error).message}\n`)
  }
}

/** Change a run under its lock and re-render HANDOFF.md from what was written. */
export function changeRun<T>(
  id: string,
  mutate: Parameters<typeof updateRun<T>>[1],
  home = pairLoopHome(),
): Promise<T> {
  return updateRun(id, mutate, { home, afterWrite: writeHandoff })
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
