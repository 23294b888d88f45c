import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { thrown } from './_expect.ts'
import { cacheDir, runStatePath, runsDir } from '../lib/ground/paths.ts'
import { activeRunsOf } from '../lib/run/run-access.ts'
import type { RunState } from '../lib/run/state.ts'
import { createRun, updateRun } from '../lib/run/store.ts'
import { isolatedEnv, makeRepo, runCli, tempDir } from './_helpers.ts'
import { runState } from './_state.ts'

// The runs index ($PAIR_LOOP_HOME/cache/runs-index/, docs/performance.md): what it lists is read from its files here,
// and what the commands answer from the state files the tests wrote.

const A = '/work/project-a'
const B = '/work/project-b'

let seq = 0
function newState(repo: string, over: Partial<RunState> = {}): RunState {
  const n = seq++
  const created_at = new Date(Date.UTC(2026, 10, 30, 5, 0, n)).toISOString()
  return runState({
    run_id: `20261130-05${String(n).padStart(4, '0')}-${n.toString(16).padStart(6, '0')}`,
    repo,
    created_at,
    ...over,
  })
}

const indexDir = (home: string) => join(cacheDir(home), 'runs-index')

/** Every run the index's repository files list, with its repository and phase. */
function indexed(home: string): Record<string, { repo: string; phase: string | null }> {
  const listed: Record<string, { repo: string; phase: string | null }> = {}
  for (const name of readdirSync(indexDir(home)).filter((file) => /^repo-.*\.json$/.test(file))) {
    const file = JSON.parse(readFileSync(join(indexDir(home), name), 'utf8')) as {
      runs: Record<string, { repo: string; phase: string | null }>
    }
    for (const [id, entry] of Object.entries(file.runs)) listed[id] = { repo: entry.repo, phase: entry.phase }
  }
  return listed
}

/** A home with an active and a finished run of A and a finished run of B, and an index built by a lookup. */
async function homeWithRuns() {
  const home = tempDir()
  const active = await createRun(newState(A), { home })
  const finished = await createRun(newState(A, { phase: 'finished' }), { home })
  const other = await createRun(newState(B, { phase: 'finished' }), { home })
  expect(activeRunsOf(A, home).map((run) => run.run_id)).toEqual([active.run_id])
  const all = {
    [active.run_id]: { repo: A, phase: 'coding' },
    [finished.run_id]: { repo: A, phase: 'finished' },
    [other.run_id]: { repo: B, phase: 'finished' },
  }
  return { home, active, finished, other, all }
}

const ids = (runs: RunState[]) => runs.map((run) => run.run_id).sort()
const writeJson = (path: string, value: unknown) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`)

const caught = (work: () => unknown) => thrown(work)

describe('the runs index', () => {
  it('lists every run with its repository and phase once a command has looked', async () => {
    const { home, all } = await homeWithRuns()
    expect(indexed(home)).toEqual(all)
  })

  it('follows each write of a run: its new phase is listed with no lookup in between', async () => {
    const { home, active, all } = await homeWithRuns()
    await updateRun(active.run_id, (state) => ({ state: { ...state, phase: 'reviewing' }, result: null }), { home })
    expect(indexed(home)).toEqual({ ...all, [active.run_id]: { repo: A, phase: 'reviewing' } })
  })

  it('is written again after it is deleted', async () => {
    const { home, active, all } = await homeWithRuns()
    rmSync(indexDir(home), { recursive: true })
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    expect(indexed(home)).toEqual(all)
  })

  it('is rebuilt when its stamp is cut short', async () => {
    const { home, active, all } = await homeWithRuns()
    const stamp = join(indexDir(home), 'stamp.json')
    truncateSync(stamp, Math.floor(readFileSync(stamp).length / 2))
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    expect(() => JSON.parse(readFileSync(stamp, 'utf8'))).not.toThrow()
    expect(indexed(home)).toEqual(all)
  })

  it('is rebuilt when the repository file listing the runs here is cut short', async () => {
    const { home, active, all } = await homeWithRuns()
    const mine = readdirSync(indexDir(home)).find(
      (name) => name.startsWith('repo-') && readFileSync(join(indexDir(home), name), 'utf8').includes(active.run_id),
    )!
    truncateSync(join(indexDir(home), mine), 10)
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    expect(indexed(home)).toEqual(all)
  })

  it('is rebuilt when the repository file listing the runs here is gone', async () => {
    const { home, active, all } = await homeWithRuns()
    for (const name of readdirSync(indexDir(home)).filter((file) => file.startsWith('repo-')))
      if (readFileSync(join(indexDir(home), name), 'utf8').includes(active.run_id))
        unlinkSync(join(indexDir(home), name))
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    expect(indexed(home)).toEqual(all)
  })
})

describe('a runs index made stale behind its back', () => {
  it('finds a state file copied into runs/, and lists it', async () => {
    const { home, active, all } = await homeWithRuns()
    const copied = newState(A)
    writeJson(runStatePath(copied.run_id, home), copied)
    expect(ids(activeRunsOf(A, home))).toEqual(ids([active, copied]))
    expect(indexed(home)).toEqual({ ...all, [copied.run_id]: { repo: A, phase: 'coding' } })
  })

  it('no longer returns a state file deleted from runs/, nor lists it', async () => {
    const { home, active, all } = await homeWithRuns()
    unlinkSync(runStatePath(active.run_id, home))
    expect(activeRunsOf(A, home)).toEqual([])
    const { [active.run_id]: _gone, ...rest } = all
    expect(indexed(home)).toEqual(rest)
  })

  it('sees a finished state file edited in place to be active again', async () => {
    const { home, active, finished } = await homeWithRuns()
    writeFileSync(runStatePath(finished.run_id, home), JSON.stringify({ ...finished, phase: 'capped' }))
    expect(ids(activeRunsOf(A, home))).toEqual(ids([active, { ...finished, phase: 'capped' }]))
  })

  it('sees a state file moved to another repository by an edit', async () => {
    const { home, active } = await homeWithRuns()
    writeFileSync(runStatePath(active.run_id, home), JSON.stringify({ ...active, repo: B }))
    expect(ids(activeRunsOf(A, home))).toEqual([])
    expect(ids(activeRunsOf(B, home))).toEqual([active.run_id])
  })
})

describe('a damaged state file', () => {
  it('of this repository is state_malformed when its repository can still be read in it', async () => {
    const { home, finished } = await homeWithRuns()
    const path = runStatePath(finished.run_id, home)
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 400))
    const error = caught(() => activeRunsOf(A, home))
    expect(error.code).toBe('state_malformed')
    expect(error.details.path).toBe(path)
  })

  it('of this repository is state_malformed when it was emptied after the index listed it', async () => {
    const { home, finished } = await homeWithRuns()
    const path = runStatePath(finished.run_id, home)
    truncateSync(path, 0)
    const error = caught(() => activeRunsOf(A, home))
    expect(error.code).toBe('state_malformed')
    expect(error.details.path).toBe(path)
  })

  it('of another repository is not this repository’s error', async () => {
    const { home, active, other } = await homeWithRuns()
    const path = runStatePath(other.run_id, home)
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 400))
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    expect(caught(() => activeRunsOf(B, home)).code).toBe('state_malformed')
  })
})

describe('writes with a runs index', () => {
  it('sweep a killed writer’s temp file at the run’s next write, even after a lookup listed runs/', async () => {
    const { home, active } = await homeWithRuns()
    const leftover = join(runsDir(home), `.${active.run_id}.json.99999.1.tmp`)
    writeFileSync(leftover, '{"half":')
    expect(ids(activeRunsOf(A, home))).toEqual([active.run_id])
    await updateRun(active.run_id, (state) => ({ state: { ...state, task: 'next' }, result: null }), { home })
    expect(existsSync(leftover)).toBe(false)
  })

  it('wait for the index’s lock: a run’s new phase is entered only once the lock is free', async () => {
    const { home, active, all } = await homeWithRuns()
    const lock = `${indexDir(home)}.lock`
    mkdirSync(lock)
    const writing = updateRun(active.run_id, (state) => ({ state: { ...state, phase: 'reviewing' }, result: null }), {
      home,
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(indexed(home)).toEqual(all)
    rmdirSync(lock)
    await writing
    expect(indexed(home)[active.run_id]).toEqual({ repo: A, phase: 'reviewing' })
  })

  it('take over the index’s lock left by a killed holder', async () => {
    const { home, active } = await homeWithRuns()
    const lock = `${indexDir(home)}.lock`
    mkdirSync(lock)
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    await updateRun(active.run_id, (state) => ({ state: { ...state, phase: 'reviewing' }, result: null }), { home })
    expect(indexed(home)[active.run_id]).toEqual({ repo: A, phase: 'reviewing' })
    expect(existsSync(lock)).toBe(false)
  })

  it('keep every run when starts in three repositories run at once', async () => {
    const env = isolatedEnv()
    const repos = [makeRepo(), makeRepo(), makeRepo()]
    const started = await Promise.all(repos.map((repo) => runCli(['start', '--task', 'at once'], { cwd: repo, env })))
    for (const result of started) expect(result.code, result.stdout + result.stderr).toBe(0)
    const listed = indexed(env.PAIR_LOOP_HOME)
    expect(Object.keys(listed).sort()).toEqual(started.map((result) => result.json.run_id as string).sort())
    for (const [i, result] of started.entries())
      expect(listed[result.json.run_id]).toEqual({ repo: repos[i], phase: 'coding' })
  })
})
