// The run state on disk: schema-checked on every read, changed only under the run's lock, written atomically.
import { lstatSync, mkdirSync, readFileSync, readdirSync } from 'node:fs'
import * as v from 'valibot'
import { fail, PairLoopError } from '../ground/errors.ts'
import { context, nowIso } from '../ground/context.ts'
import { ioFailure, writeFileAtomic } from '../ground/fsutil.ts'
import { withLock } from '../ground/lock.ts'
import { RUN_ID_PATTERN, runStatePath, runsDir } from '../ground/paths.ts'
import { withRunsWindow } from './run-index-window.ts'
import { RunState } from './state.ts'
import { parseJson, validate } from '../ground/validate.ts'

export interface StoreOptions {
  home?: string
  /** Called inside the lock after every write: HANDOFF.md is rendered from the state just written. */
  afterWrite?: (state: RunState, previous: RunState | null) => void
}

export function readRun(id: string, home = context().home): RunState {
  const path = runStatePath(id, home)
  let text: string
  try {
    if (lstatSync(path).isSymbolicLink()) {
      fail('state_malformed', `${path} is a symbolic link; refusing to follow it`, { path })
    }
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (error instanceof PairLoopError) throw error
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      fail('run_not_found', `no run ${id} in ${runsDir(home)}`, { run_id: id })
    throw error
  }
  return parseRunState(text, path)
}

const LEFT_AS_IT_IS = '; it was left as it is'

export function parseRunState(text: string, path: string): RunState {
  return validate(
    RunState,
    parseJson(text, 'state_malformed', path, LEFT_AS_IT_IS),
    'state_malformed',
    path,
    LEFT_AS_IT_IS,
  )
}

/** Every run on disk, newest first; a file that fails its schema is reported, not skipped silently. */
export type ListedRun = { state: RunState } | { error: PairLoopError; run_id: string; repo: string | null }

export function listRuns(home = context().home): ListedRun[] {
  let names: string[]
  try {
    names = readdirSync(runsDir(home))
  } catch {
    return []
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -5))
    .filter((id) => RUN_ID_PATTERN.test(id))
    .map((id) => ({ id, entry: listedRun(id, home) }))
    .sort(newestFirst)
    .map(({ entry }) => entry)
}

/** A state file's run: read, or the error that kept it from being read. */
function listedRun(run_id: string, home: string): ListedRun {
  try {
    return { state: readRun(run_id, home) }
  } catch (error) {
    if (error instanceof PairLoopError) return { error, run_id, repo: repoHint(runStatePath(run_id, home)) }
    throw error
  }
}

type Named = { id: string; entry: ListedRun }
const createdMs = ({ entry }: Named) => ('state' in entry ? Date.parse(entry.state.created_at) || 0 : 0)
const descending = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0)

/**
 * Newest first: by the second a file's id names ('YYYYMMDD-HHMMSS'), then, within one second, by when each state says
 * it was created (an id's random suffix says nothing of which came first), then by id.
 */
const newestFirst = (a: Named, b: Named) =>
  descending(a.id.slice(0, 15), b.id.slice(0, 15)) || createdMs(b) - createdMs(a) || descending(a.id, b.id)

/** What a change of a run yields: the state to write (none: nothing changes, `revision` stays) and a result. */
export type Step<T> = { state: RunState; result: T } | { state?: undefined; result: T }
type Mutation<T> = (state: RunState) => Step<T>

/**
 * Lock, read, change, write, render, release, then enter the run in the runs index (lib/run/run-index-window.ts). A
 * mutation that returns no new state writes nothing (idempotent replays keep `revision` as it is).
 */
export async function updateRun<T>(id: string, mutate: Mutation<T>, options: StoreOptions = {}): Promise<T> {
  const home = options.home ?? context().home
  const path = runStatePath(id, home)
  readRun(id, home) // fail fast with run_not_found / state_malformed before waiting on a lock
  return withRunsWindow(home, ({ note, sweep }) =>
    withLock(path, () => {
      const current = readRun(id, home)
      const { state, result } = mutate(structuredClone(current))
      if (state) {
        const next = v.parse(RunState, {
          ...state,
          revision: current.revision + 1,
          updated_at: nowIso(),
        })
        writeState(path, `${JSON.stringify(next, null, 2)}\n`, sweep(id))
        note(next, path)
        options.afterWrite?.(next, current)
      }
      return result
    }),
  )
}

export async function createRun(state: RunState, options: StoreOptions = {}): Promise<RunState> {
  const home = options.home ?? context().home
  const path = runStatePath(state.run_id, home)
  ensureRunsDir(home)
  const checked = v.parse(RunState, state)
  return withRunsWindow(
    home,
    ({ note, sweep }) =>
      withLock(path, () => {
        writeState(path, `${JSON.stringify(checked, null, 2)}\n`, sweep(checked.run_id))
        note(checked, path)
        options.afterWrite?.(checked, null)
        return checked
      }),
    { creating: checked },
  )
}

/**
 * The state file written atomically. A filesystem that refuses (full, read-only, over quota or the file-size limit,
 * no permission) leaves the old state as it was; the table has no code for that, so it is `internal`, saying so.
 * runs/ is listed for a killed writer's temp files only when the runs index cannot tell there are none (`sweep`):
 * with a long history that listing was most of a write.
 */
function writeState(path: string, text: string, sweep: boolean): void {
  try {
    writeFileAtomic(path, text, 0o600, { sweep })
  } catch (error) {
    ioFailure(path, error)
  }
}

/** `$PAIR_LOOP_HOME/runs`, created if need be; one that cannot be is said plainly. */
export function ensureRunsDir(home = context().home): void {
  try {
    mkdirSync(runsDir(home), { recursive: true })
  } catch (error) {
    ioFailure(runsDir(home), error)
  }
}

/** The repository a damaged state file belonged to, if its `repo` field survived, so it is not silently skipped. */
export function repoHint(path: string): string | null {
  try {
    const match = /"repo"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(readFileSync(path, 'utf8').slice(0, 64 * 1024))
    return match ? (JSON.parse(match[1]!) as string) : null
  } catch {
    return null
  }
}
