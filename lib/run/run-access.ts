// Which run a command means (`--run`, or the active run of the repository here), and changing it under its lock
// with HANDOFF.md re-rendered from what was written.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { type Config, loadConfig } from './config.ts'
import { configDrift, warnConfigDrift } from './config-drift.ts'
import { fail, PairLoopError } from '../ground/errors.ts'
import { readFileHead, writeFileAtomic } from '../ground/fsutil.ts'
import { currentBranch, findTopLevelFast, HANDOFF_NAME } from '../ground/git.ts'
import { renderHandoff } from './handoff.ts'
import { checkHomeOutside, checkRunId, RUN_ID_PATTERN, runArtifactsDir } from '../ground/paths.ts'
import { type IndexedRun, indexedRunsOf } from './run-index.ts'
import { isActive } from './run-queries.ts'
import type { RunState } from './state.ts'
import { readRun, updateRun } from './store.ts'
import { context } from '../ground/context.ts'

/** The repository's runs not yet finished (read without reading the others; a damaged one of it fails: it may be active). */
export function activeRunsOf(repo: string, home = context().home): RunState[] {
  return readIndexed(repo, home, (runs) => runs.filter((run) => run.phase !== 'finished'))
}

/** The active runs, or with none the newest by when it started (DESIGN: not by its id). */
function activeOrNewest(runs: IndexedRun[]): IndexedRun[] {
  const active = runs.filter((run) => run.phase !== 'finished')
  if (active.length > 0) return active
  const newest = runs.reduce<IndexedRun | undefined>((a, b) => (a && a.created_at! >= b.created_at! ? a : b), undefined)
  return newest ? [newest] : []
}

/**
 * The state files of the runs `pick` takes from the index's list for `repo`, read and checked against it. A damaged
 * file of the repository is its `state_malformed`; a file that disagrees with the index (gone, another repository's,
 * another phase or start) sends the index to be rebuilt from every state file, once; then the files decide.
 */
function readIndexed(repo: string, home: string, pick: (runs: IndexedRun[]) => IndexedRun[]): RunState[] {
  for (let rebuild = false; ; rebuild = true) {
    const runs = indexedRunsOf(repo, home, { rebuild })
    const damaged = runs.filter((run) => run.phase === null)
    const read = [...damaged, ...pick(runs.filter((run) => run.phase !== null))].map((run) => ({
      run,
      state: readOrError(run.run_id, home),
    }))
    const error = read.find(({ state }) => state instanceof PairLoopError && state.code !== 'run_not_found')
    if (error) throw error.state
    const agree = read.every(
      ({ run, state }) =>
        !(state instanceof PairLoopError) &&
        state.repo === repo &&
        state.phase === run.phase &&
        state.created_at === run.created_at,
    )
    const states = read.flatMap(({ state }) => (state instanceof PairLoopError || state.repo !== repo ? [] : [state]))
    if (agree || rebuild) return states
  }
}

function readOrError(id: string, home: string): RunState | PairLoopError {
  try {
    return readRun(id, home)
  } catch (error) {
    if (error instanceof PairLoopError) return error
    throw error
  }
}

/**
 * `--run` if given, else the one active run whose repository is the one around `cwd`. A config file changed or broken
 * since the run's start is said on stderr, once per command (the run goes on with the config frozen at its start).
 */
export function resolveRun(
  flags: { run?: string; cwd?: string },
  options: { allowFinished?: boolean; home?: string } = {},
): RunState {
  const run = findRun(flags, options)
  warnConfigDrift(run, options.home)
  return run
}

function findRun(
  { run, cwd }: { run?: string; cwd?: string },
  { allowFinished = false, home = context().home }: { allowFinished?: boolean; home?: string },
): RunState {
  if (run !== undefined) return readRun(checkRunId(run), home)
  const dir = cwd ?? context().cwd
  const top = findTopLevelFast(resolve(context().cwd, dir)) // --cwd as given, from where the command started
  if (!top) fail('run_not_found', `${dir} is not inside a git repository, and no --run was given`, { cwd: dir })
  checkHomeOutside(top, home)
  const runs = readIndexed(top, home, activeOrNewest)
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

/**
 * Where the run's transcript is rendered: HANDOFF.md at the repository's top (kept out of git by the exclude file),
 * unless a HANDOFF.md there is not pair-loop's (tracked at start, a folder, a file the coder wrote): then beside the
 * run's state, for good (its file there says so). No name is set aside from what ships (lib/snapshot/ship.ts): a
 * HANDOFF.md in the repository is the change's, shown and compared like any other file, and never overwritten.
 */
export function handoffPath(run: Pick<RunState, 'repo' | 'run_id'>, home = context().home): string {
  const outside = outsideHandoffPath(run.run_id, home)
  if (existsSync(outside) || foreignHandoff(run.repo, home) !== null) return outside
  return join(run.repo, HANDOFF_NAME)
}

/** The transcript's place beside the run's state, used where the repository's HANDOFF.md is not pair-loop's. */
export const outsideHandoffPath = (runId: string, home = context().home) =>
  join(runArtifactsDir(runId, home), HANDOFF_NAME)

/** HANDOFF.md follows state on every write; a repository that vanished doesn't fail the state change. */
export function writeHandoff(run: RunState, home = context().home): void {
  if (!existsSync(run.repo)) return
  let path = join(run.repo, HANDOFF_NAME)
  try {
    path = handoffPath(run, home)
    mkdirSync(dirname(path), { recursive: true })
    writeFileAtomic(path, renderHandoff(run), 0o644)
  } catch (error) {
    context().io.stderr(`pair-loop: warning: could not write ${path}: ${(error as Error).message}\n`)
  }
}

/**
 * Change a run under its lock and re-render HANDOFF.md from what was written. HANDOFF.md belongs to the repository's
 * active run: a run that was already finished (a later `finish --pr`, `reply --post-pr`) never rewrites it.
 */
export function changeRun<T>(
  id: string,
  mutate: Parameters<typeof updateRun<T>>[1],
  home = context().home,
): Promise<T> {
  return updateRun(id, mutate, {
    home,
    afterWrite: (next, previous) => {
      if (previous === null || isActive(previous)) writeHandoff(next, home) // the run's home: its own, not the caller's
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
export function foreignHandoff(repo: string, home = context().home): string | null {
  const path = join(repo, HANDOFF_NAME)
  let head: Buffer | null | undefined
  try {
    head = readFileHead(path, 200) // a FIFO there would hang a plain read, unkillably
  } catch {
    return path
  }
  if (head === undefined) return null
  if (head === null) return path // pair-loop writes a regular file: a link or a FIFO is someone else's
  const first = head.toString('utf8').split('\n')[0]!
  const id = /^# Pair-Loop Handoff — (\S+)$/.exec(first)?.[1]
  if (!id || !RUN_ID_PATTERN.test(id)) return path
  const run = readOrError(id, home) // the run it names, read: its state file says whose it is
  if (run instanceof PairLoopError && run.code !== 'run_not_found') throw run
  return run instanceof PairLoopError || run.repo !== repo ? path : null
}

/** The config a run goes by: the one frozen at its start, so a file changed mid-run moves nothing; a run started
 * before runs froze theirs reads it live. */
export function configOf(run: RunState, home = context().home): Config {
  return run.config ?? loadConfig({ repo: run.repo, home })
}

/** Whether a config file the run started under changed (or one appeared or went) since: `status` says so. */
export function configChanged(run: RunState, home = context().home): boolean | null {
  return run.config ? configDrift(run, home).length > 0 : null
}
