import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { afterEach, describe, expect, it } from 'vitest'
import { PairLoopError } from '../lib/ground/errors.ts'
import { checkRunId, newRunId, runStatePath, runsDir, RUN_ID_PATTERN } from '../lib/ground/paths.ts'
import type { RunState } from '../lib/run/state.ts'
import { createRun, listRuns, readRun, updateRun } from '../lib/run/store.ts'
import { tempDir } from './_helpers.ts'
import { runState } from './_state.ts'

let seq = 0
function newState(over: Partial<RunState> = {}): RunState {
  const now = new Date().toISOString()
  const suffix = Math.floor(Math.random() * 0xffffff)
    .toString(16)
    .padStart(6, '0')
  const run_id = `20261130-0515${String(seq++ % 60).padStart(2, '0')}-${suffix}`
  return runState({
    run_id,
    task: 't',
    repo: '/tmp/r',
    base_sha: 'b'.repeat(40),
    created_at: now,
    updated_at: now,
    ...over,
  })
}

async function caught(promise: Promise<unknown> | (() => unknown)): Promise<PairLoopError> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    if (error instanceof PairLoopError) return error
    throw error
  }
  throw new Error('expected a PairLoopError')
}

const bytes = (path: string) => readFileSync(path).toString('base64')
const setTask = (task: string) => (state: RunState) => ({ state: { ...state, task }, result: task })

describe('run state store', () => {
  const savedWait = process.env.PAIR_LOOP_LOCK_WAIT_MS
  afterEach(() => {
    if (savedWait === undefined) delete process.env.PAIR_LOOP_LOCK_WAIT_MS
    else process.env.PAIR_LOOP_LOCK_WAIT_MS = savedWait
  })

  it('writes a new run that reads back equal, private to the user', async () => {
    const home = tempDir()
    const state = newState()
    await createRun(state, { home })
    expect(readRun(state.run_id, home)).toEqual(state)
    expect(statSync(runStatePath(state.run_id, home)).mode & 0o777).toBe(0o600)
  })

  it('raises revision by one and refreshes updated_at on every write, then renders after it', async () => {
    const home = tempDir()
    const state = await createRun(newState({ updated_at: '2020-01-01T00:00:00.000Z' }), { home })
    const rendered: number[] = []
    for (const task of ['a', 'b', 'c']) {
      expect(await updateRun(state.run_id, setTask(task), { home, afterWrite: (s) => rendered.push(s.revision) })).toBe(
        task,
      )
    }
    const after = readRun(state.run_id, home)
    expect(after.revision).toBe(state.revision + 3)
    expect(after.task).toBe('c')
    expect(after.updated_at > '2020-01-01T00:00:00.000Z').toBe(true)
    expect(rendered).toEqual([2, 3, 4])
  })

  it('writes nothing when a mutation returns no new state', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const before = bytes(runStatePath(state.run_id, home))
    let rendered = false
    expect(
      await updateRun(state.run_id, () => ({ result: 'same' }), {
        home,
        afterWrite: () => {
          rendered = true
        },
      }),
    ).toBe('same')
    expect(bytes(runStatePath(state.run_id, home))).toBe(before)
    expect(rendered).toBe(false)
  })

  it('never writes a state that fails the schema, and releases the lock after a failed mutation', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const path = runStatePath(state.run_id, home)
    const before = bytes(path)
    await expect(
      updateRun(state.run_id, (s) => ({ state: { ...s, phase: 'dancing' as RunState['phase'] }, result: 0 }), { home }),
    ).rejects.toThrow()
    await expect(
      updateRun(
        state.run_id,
        () => {
          throw new Error('mutation failed')
        },
        { home },
      ),
    ).rejects.toThrow('mutation failed')
    expect(bytes(path)).toBe(before)
    expect(existsSync(`${path}.lock`)).toBe(false)
    await updateRun(state.run_id, setTask('after'), { home })
    expect(readRun(state.run_id, home).task).toBe('after')
  })

  it('leaves no temp file behind and clears those of a writer killed half-way', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const leftover = join(runsDir(home), `.${state.run_id}.json.99999.1.tmp`)
    writeFileSync(leftover, '{"half":')
    await updateRun(state.run_id, setTask('x'), { home })
    expect(readdirSync(runsDir(home)).sort()).toEqual([`${state.run_id}.json`])
  })

  it('reports a missing run as run_not_found with its id', async () => {
    const error = await caught(() => readRun('20261130-051500-abcdef', tempDir()))
    expect(error.code).toBe('run_not_found')
    expect(error.details.run_id).toBe('20261130-051500-abcdef')
    expect((await caught(updateRun('20261130-051500-abcdef', setTask('x'), { home: tempDir() }))).code).toBe(
      'run_not_found',
    )
  })

  it('refuses a malformed run id as usage before touching any path', async () => {
    for (const id of [
      '../x',
      '../../etc/passwd',
      '20261130-051500-ABCDEF',
      '20261130-051500-a1b2c3/../x',
      '',
      '20261130-051500-a1b2c3.json',
    ]) {
      expect((await caught(() => readRun(id, tempDir()))).code, id).toBe('usage')
      expect((await caught(() => checkRunId(id))).code, id).toBe('usage')
    }
  })

  it('makes run ids of the documented shape', () => {
    expect(newRunId(new Date('2026-11-30T05:15:00Z'), () => 0.5)).toBe('20261130-051500-800000')
    expect(RUN_ID_PATTERN.test(newRunId())).toBe(true)
  })

  const malformed: Array<[string, (text: string) => string, RegExp]> = [
    ['truncated to half', (text) => text.slice(0, Math.floor(text.length / 2)), /is not valid JSON: cut short/],
    ['empty', () => '', /is empty/],
    [
      'a bad phase',
      (text) => text.replace('"phase": "coding"', '"phase": "dancing"'),
      /phase should be .*"coding".*, not "dancing"/,
    ],
    ['a missing key', (text) => JSON.stringify({ ...JSON.parse(text), revision: undefined }), /revision is missing/],
    ['another version', (text) => text.replace('"version": 1', '"version": 2'), /version should be 1, not 2/],
  ]
  for (const [name, corrupt, message] of malformed) {
    it(`reports a state file ${name} as state_malformed and never overwrites it`, async () => {
      const home = tempDir()
      const state = await createRun(newState(), { home })
      const path = runStatePath(state.run_id, home)
      writeFileSync(path, corrupt(readFileSync(path, 'utf8')))
      const before = bytes(path)
      const read = await caught(() => readRun(state.run_id, home))
      expect(read.code).toBe('state_malformed')
      expect(read.message).toMatch(message)
      expect(read.details.path).toBe(path)
      expect((await caught(updateRun(state.run_id, setTask('x'), { home }))).code).toBe('state_malformed')
      expect(bytes(path)).toBe(before)
    })
  }

  it('names the failing keys of a state that fails its schema', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const path = runStatePath(state.run_id, home)
    writeFileSync(path, JSON.stringify({ ...state, max_rounds: 0, coder: 'gpt' }))
    const error = await caught(() => readRun(state.run_id, home))
    expect((error.details.issues as string[]).join('\n')).toMatch(/max_rounds[\s\S]*coder|coder[\s\S]*max_rounds/)
  })

  it('refuses to follow a state file that is a symbolic link', async () => {
    const home = tempDir()
    const real = await createRun(newState(), { home })
    const id = '20261130-051500-5abb01'
    symlinkSync(runStatePath(real.run_id, home), runStatePath(id, home))
    expect((await caught(() => readRun(id, home))).code).toBe('state_malformed')
  })

  it('lists runs newest first and reports an unreadable one instead of skipping it', async () => {
    const home = tempDir()
    const older = await createRun(newState({ run_id: '20261129-000000-aaaaaa' }), { home })
    const newer = await createRun(newState({ run_id: '20261130-000000-bbbbbb' }), { home })
    writeFileSync(join(runsDir(home), '20261130-120000-cccccc.json'), '{')
    writeFileSync(join(runsDir(home), 'notes.json'), '{}')
    mkdirSync(join(runsDir(home), newer.run_id)) // a run's artifact folder is not a run
    const listed = listRuns(home).map((entry) =>
      'state' in entry ? entry.state.run_id : `error:${entry.run_id}:${entry.error.code}`,
    )
    expect(listed).toEqual(['error:20261130-120000-cccccc:state_malformed', newer.run_id, older.run_id])
    expect(listRuns(tempDir())).toEqual([])
  })

  it("lists two runs started in the same second in the order they were created, whatever their ids' random parts", async () => {
    const home = tempDir()
    // the later run has the smaller suffix: ids alone would list it second
    const first = await createRun(
      newState({ run_id: '20261130-051500-ffffff', created_at: '2026-11-30T05:15:00.100Z' }),
      { home },
    )
    const second = await createRun(
      newState({ run_id: '20261130-051500-000000', created_at: '2026-11-30T05:15:00.900Z' }),
      { home },
    )
    const listed = listRuns(home).map((entry) => ('state' in entry ? entry.state.run_id : entry.run_id))
    expect(listed).toEqual([second.run_id, first.run_id])
  })

  it('gives up with locked (75) when another holder keeps the lock past the bounded wait', async () => {
    process.env.PAIR_LOOP_LOCK_WAIT_MS = '300'
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const path = runStatePath(state.run_id, home)
    const before = bytes(path)
    const release = await lockfile.lock(path, { realpath: false, stale: 10_000 })
    try {
      const startedAt = Date.now()
      const error = await caught(updateRun(state.run_id, setTask('x'), { home }))
      const elapsed = Date.now() - startedAt
      expect(error.code).toBe('locked')
      // waited_ms is the time really waited: the whole bound, and no more than the call took
      expect(error.details.waited_ms).toBeGreaterThanOrEqual(300)
      expect(error.details.waited_ms).toBeLessThanOrEqual(elapsed)
      expect(elapsed).toBeLessThan(5_000)
      expect(bytes(path)).toBe(before)
    } finally {
      await release()
    }
  })

  it('waits for a lock released within the wait and then writes', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const release = await lockfile.lock(runStatePath(state.run_id, home), { realpath: false, stale: 10_000 })
    setTimeout(() => {
      void release()
    }, 150)
    await updateRun(state.run_id, setTask('after wait'), { home })
    expect(readRun(state.run_id, home)).toMatchObject({ task: 'after wait', revision: 2 })
  })

  it('reclaims a stale lock left by a crashed writer', async () => {
    process.env.PAIR_LOOP_LOCK_WAIT_MS = '300'
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const lockDir = `${runStatePath(state.run_id, home)}.lock`
    mkdirSync(lockDir)
    const past = new Date(Date.now() - 60_000)
    utimesSync(lockDir, past, past)
    await updateRun(state.run_id, setTask('reclaimed'), { home })
    expect(readRun(state.run_id, home).task).toBe('reclaimed')
    expect(existsSync(lockDir)).toBe(false)
  })

  it('loses no update when many writers in one process race', async () => {
    const home = tempDir()
    const state = await createRun(newState(), { home })
    const keys = Array.from({ length: 12 }, (_, i) => `1.${i + 1}`)
    await Promise.all(
      keys.map((key) =>
        updateRun(
          state.run_id,
          (s) => {
            s.replies[key] = {
              finding: key,
              key,
              disposition: 'ack',
              body: key,
              at: new Date().toISOString(),
              comment_url: null,
            }
            return { state: s, result: key }
          },
          { home },
        ),
      ),
    )
    const after = readRun(state.run_id, home)
    expect(Object.keys(after.replies).sort()).toEqual([...keys].sort())
    expect(after.revision).toBe(state.revision + keys.length)
  })
})
