// Crashes: a writer SIGKILLed at any point leaves the old state or the new one, never a mix; what it leaves
// behind (temp files, its lock) is cleaned up by the next command, and no command waits past its bound. Each kill's
// landing is read from what it left, and the killed-writer tests go on until their kills have landed in every phase.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { renderHandoff } from '../../lib/run/handoff.ts'
import { changeRun } from '../../lib/run/run-access.ts'
import { runStatePath, runsDir } from '../../lib/ground/paths.ts'
import type { RunState } from '../../lib/run/state.ts'
import { parseRunState } from '../../lib/run/store.ts'
import { recordReview, sandbox, tempDir } from '../_helpers.ts'
import { expectError, expectOk, reviewWith, runInReview, startRun, type Sandbox } from '../_expect.ts'
import { holdLock, prng, seedFor, sleep, spawnCli } from './_util.ts'

/** Whole turns of KILL_AT's seven moments: each moment three times for reply, once for coder-done. */
const REPLY_TRIALS = 21
const CODER_DONE_TRIALS = 7
/** More trials, when the first ones have not landed in every phase (the kills are random). */
const MORE_TRIALS = 3
const rand = prng(seedFor('crash'))
const tally = { trials: 0, before: 0, after: 0, lock_left: 0, temps_left: 0, handoff_stale: 0 }
afterAll(() => process.stderr.write(`[reliability/crash] ${JSON.stringify(tally)}\n`))

/**
 * Where a kill landed, read from what it left: the state file (old or new), the lock directory (held or not) and
 * the temp files (a write between its temp file and the rename). A writer that exited before the kill landed nowhere.
 */
const PHASES = [
  'before the lock',
  'holding the lock, before the write',
  'holding the lock, after the write',
  'between a temp file and its rename',
  'after the lock',
] as const
type Phase = (typeof PHASES)[number]

function phasesOf(killed: boolean, wrote: boolean, lockLeft: boolean, tempsLeft: boolean): Phase[] {
  if (!killed) return []
  const phases: Phase[] = [
    lockLeft
      ? wrote
        ? 'holding the lock, after the write'
        : 'holding the lock, before the write'
      : wrote
        ? 'after the lock'
        : 'before the lock',
  ]
  if (tempsLeft) phases.push('between a temp file and its rename')
  return phases
}

/** How many kills landed in each phase. */
function landings() {
  const count = new Map<Phase, number>(PHASES.map((phase) => [phase, 0]))
  return {
    add: (phases: Phase[]) => {
      for (const phase of phases) count.set(phase, count.get(phase)! + 1)
    },
    missing: () => PHASES.filter((phase) => count.get(phase) === 0),
    toString: () => JSON.stringify(Object.fromEntries(count)),
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4))
/** Block the test's own thread for `ms` (so polling for the lock directory is fine-grained). */
const block = (ms: number) => Atomics.wait(pause, 0, 0, ms)

/** Everything but the time of the write. */
const sameApartFromTime = (a: RunState, b: RunState) =>
  expect({ ...a, updated_at: '' }).toEqual({ ...b, updated_at: '' })

function temps(sb: Sandbox, runId: string): string[] {
  const statePrefix = `.${basename(runStatePath(runId, sb.home))}.`
  return [
    ...readdirSync(runsDir(sb.home)).filter((name) => name.startsWith(statePrefix) && name.endsWith('.tmp')),
    ...readdirSync(sb.repo).filter((name) => name.startsWith('.HANDOFF.md.') && name.endsWith('.tmp')),
  ]
}

/** When a trial kills its writer: at a random moment of its life, or just after one of its steps. */
const KILL_AT = [
  'random',
  'in the lock',
  'random',
  'after the write',
  'random',
  'after the lock',
  'on its temp file',
] as const

type KillAt = (typeof KILL_AT)[number]

/** The moment aimed at for each phase: a trial after the first ones aims at a phase no kill has landed in yet. */
const AIM: Record<Phase, KillAt> = {
  'before the lock': 'random',
  'holding the lock, before the write': 'in the lock',
  'holding the lock, after the write': 'after the write',
  'between a temp file and its rename': 'on its temp file',
  'after the lock': 'after the lock',
}

/**
 * When trial `trial` kills: KILL_AT in turn for the first `first` trials, then at the phases still missing, in turn
 * (a short window, a temp file that lives for a flush under bun, is otherwise met a few times only, by luck).
 */
function killAt(trial: number, first: number, missing: Phase[]): KillAt {
  return trial > first && missing.length > 0 ? AIM[missing[trial % missing.length]!] : KILL_AT[trial % KILL_AT.length]!
}

/**
 * Start `args`, kill it with SIGKILL at the moment `at`: after a random delay over its whole life, a random moment
 * after it has taken the run's lock (the critical section), once its temp file is there, just after its rename put
 * the new state in place, or just after it has let the lock go; then check what is on disk. Returns the state found,
 * whether the writer got as far as its write, and where the kill landed.
 */
async function killTrial(sb: Sandbox, runId: string, args: string[], lifeMs: number, at: KillAt) {
  const path = runStatePath(runId, sb.home)
  const lock = `${path}.lock`
  const before = parseRunState(readFileSync(path, 'utf8'), path)
  const inode = statSync(path).ino
  // bodies come from files, not stdin: while this thread polls for the lock it could not feed a pipe
  const writer = spawnCli(args, { cwd: sb.repo, env: sb.env })
  const until = Date.now() + lifeMs * 3
  const waitFor = (done: () => boolean) => {
    while (!done() && Date.now() < until) block(0.3)
  }
  if (at === 'random') await sleep(rand() * lifeMs * 1.1)
  else waitFor(() => existsSync(lock))
  // the lock is held for some 5–20 ms: read, write the temp file, flush, rename, render; a moment anywhere in those
  // 20 ms, nearer the start more often (cubed: half fall in the first 2.5 ms), where a fast writer's read-before-write is
  if (at === 'in the lock') block(rand() ** 3 * 20)
  // the new state written beside the old one, not yet renamed over it (a window of a flush: luck alone misses it)
  if (at === 'on its temp file') waitFor(() => temps(sb, runId).length > 0)
  if (at === 'after the write') waitFor(() => statSync(path).ino !== inode) // renamed over: HANDOFF.md and the release are left
  if (at === 'after the lock') waitFor(() => !existsSync(lock)) // released: the runs index and the document are left
  const killed = writer.child.kill('SIGKILL')
  const result = await writer.done
  tally.trials++

  // whatever the moment, the file is a whole valid state: the one before, or the one after
  const text = readFileSync(path, 'utf8')
  const state = parseRunState(text, path) // throws state_malformed on a torn or half-written file
  const wrote = state.revision !== before.revision
  if (result.code === 0) expect(wrote, 'a writer that exited 0 wrote').toBe(true)
  if (wrote) tally.after++
  else {
    tally.before++
    expect(state).toEqual(before)
  }

  const lockLeft = existsSync(lock)
  const leftovers = temps(sb, runId)
  if (lockLeft) tally.lock_left++
  if (leftovers.length) tally.temps_left++
  if (readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8') !== renderHandoff(state)) tally.handoff_stale++
  // a lock left by the killed writer is reclaimed once it is stale (10 s; shown in real time below): age it here
  if (lockLeft) utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
  // killed: the signal reached a live writer and ended it (not one that had exited by itself)
  const phases = phasesOf(killed && result.signal === 'SIGKILL', wrote, lockLeft, leftovers.length > 0)
  return { before, state, wrote, phases }
}

/** The next successful write (in process, as any command would): it sweeps the temp files and re-renders HANDOFF.md. */
async function nextWrite(sb: Sandbox, runId: string, mutate: (state: RunState) => RunState = (s) => s) {
  await changeRun(runId, (state) => ({ state: mutate(state), result: undefined }), sb.home)
  const path = runStatePath(runId, sb.home)
  const state = parseRunState(readFileSync(path, 'utf8'), path)
  expect(temps(sb, runId)).toEqual([])
  expect(existsSync(`${path}.lock`)).toBe(false)
  expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toBe(renderHandoff(state))
  return state
}

async function lifetime(run: () => Promise<unknown>): Promise<number> {
  const started = Date.now()
  await run()
  return Date.now() - started
}

describe('crash: a writer killed with SIGKILL at a random point', () => {
  it(`leaves a valid state equal to the one before or the one after, over ${REPLY_TRIALS} or more killed reply processes that landed in every phase`, async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    const most = REPLY_TRIALS * MORE_TRIALS
    await recordReview(sb.home, runId, reviewWith(most + 1))
    const bodies = tempDir('pl-bodies-')
    // how long one reply lives as a process (the kills are of processes), so the kills spread over its whole life
    const lifeMs = await lifetime(async () =>
      expectOk(
        await sb.cliProcess(['reply', '--finding', `1.${most + 1}`, '--disposition', 'ack', '--body-file', '-'], {
          input: 'calibration',
        }),
      ),
    )
    const answered: string[] = []
    const landed = landings()
    for (let i = 1; i <= most && (i <= REPLY_TRIALS || landed.missing().length); i++) {
      const id = `1.${i}`
      const body = `answer ${i}: ${'x'.repeat(Math.floor(rand() * 20_000))}`
      const bodyFile = join(bodies, `${i}.txt`)
      writeFileSync(bodyFile, body)
      const { before, state, wrote, phases } = await killTrial(
        sb,
        runId,
        ['reply', '--finding', id, '--disposition', 'wont-fix', '--body-file', bodyFile],
        lifeMs,
        killAt(i, REPLY_TRIALS, landed.missing()),
      )
      landed.add(phases)
      if (wrote) {
        // exactly the reply added, nothing else changed
        expect(state.revision).toBe(before.revision + 1)
        expect(state.replies[id]).toMatchObject({ finding: id, disposition: 'wont-fix', body })
        const { [id]: _added, ...rest } = state.replies
        sameApartFromTime({ ...state, replies: rest, revision: before.revision }, before)
        answered.push(id)
      } else {
        expect(state.replies[id]).toBeUndefined()
      }
      const after = await nextWrite(sb, runId)
      expect(after.revision).toBe(state.revision + 1)
    }
    const final = parseRunState(readFileSync(runStatePath(runId, sb.home), 'utf8'), 'state')
    expect(Object.keys(final.replies).sort()).toEqual([...answered, `1.${most + 1}`].sort())
    process.stderr.write(`[reliability/crash] reply kills landed: ${landed}\n`)
    expect(landed.missing(), `where the kills landed: ${landed}`).toEqual([])
  }, 300_000)

  it(`leaves a valid state equal to the one before or the one after, over ${CODER_DONE_TRIALS} or more killed coder-done processes that landed in every phase`, async () => {
    const sb = sandbox()
    const runId = await startRun(sb, ['--max-rounds', '100'])
    const lifeMs = await lifetime(async () => {
      expectOk(await sb.cliProcess(['coder-done', '--summary', 'calibration']))
    })
    await recordReview(sb.home, runId, 'VERDICT: CHANGES_REQUESTED')
    const landed = landings()
    const most = CODER_DONE_TRIALS * MORE_TRIALS
    for (let i = 1; i <= most && (i <= CODER_DONE_TRIALS || landed.missing().length); i++) {
      const summary = `round ${i} summary ${'y'.repeat(Math.floor(rand() * 5_000))}`
      const { before, state, wrote, phases } = await killTrial(
        sb,
        runId,
        ['coder-done', '--summary', summary],
        lifeMs,
        killAt(i, CODER_DONE_TRIALS, landed.missing()),
      )
      landed.add(phases)
      if (wrote) {
        expect(state.revision).toBe(before.revision + 1)
        expect(state.phase).toBe('reviewing')
        expect(state.rounds).toHaveLength(before.rounds.length + 1)
        expect(state.rounds.at(-1)!.coder.summary).toBe(summary)
        sameApartFromTime(
          { ...state, rounds: state.rounds.slice(0, -1), phase: before.phase, revision: before.revision },
          before,
        )
        await recordReview(sb.home, runId, 'VERDICT: CHANGES_REQUESTED') // back to coding for the next trial
      } else {
        expect(state.phase).toBe('coding')
      }
      await nextWrite(sb, runId)
    }
    process.stderr.write(`[reliability/crash] coder-done kills landed: ${landed}\n`)
    expect(landed.missing(), `where the kills landed: ${landed}`).toEqual([])
  }, 300_000)
})

describe('crash: temp files left behind', () => {
  it('does not count a HANDOFF.md temp file left by a killed writer as a change: start and coder-done see a clean tree', async () => {
    const sb = sandbox()
    const first = await startRun(sb)
    expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED', '--run', first]))
    // what a writer killed between writing its HANDOFF.md temp file and renaming it leaves in the repository
    const leftover = () =>
      writeFileSync(join(sb.repo, `.HANDOFF.md.${process.pid}.${Date.now()}.tmp`), '# Pair-Loop Handoff — half of it\n')
    leftover()
    const second = await startRun(sb) // not dirty_tree
    expect(second).not.toBe(first)
    leftover()
    // startRun's one committed line only: the temp file is no changed file
    expect(expectOk(await sb.cli(['coder-done', '--summary', 'one line changed'])).diff).toEqual({
      files: 1,
      insertions: 1,
      deletions: 0,
    })
    // and the write just made swept it
    expect(readdirSync(sb.repo).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })
})

describe('crash: locks left behind', () => {
  it('reclaims a lock directory whose mtime is older than the stale time at once', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    const lock = `${runStatePath(runId, sb.home)}.lock`
    mkdirSync(lock)
    utimesSync(lock, new Date(Date.now() - 30_000), new Date(Date.now() - 30_000))
    const started = Date.now()
    expectOk(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], { input: 'done' }),
    )
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(existsSync(lock)).toBe(false)
  })

  it('reclaims the lock of a process killed while holding it within the 10 s stale time, and not before it is stale', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    const before = await recordReview(sb.home, runId, reviewWith(1))
    const path = runStatePath(runId, sb.home)
    const holder = await holdLock(path)
    holder.kill('SIGKILL')
    const killedAt = Date.now()
    await new Promise((resolve) => holder.once('exit', resolve))
    expect(existsSync(`${path}.lock`), 'SIGKILL leaves the lock directory').toBe(true)
    const result = await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], {
      input: 'after the crash',
    })
    const waited = Date.now() - killedAt
    process.stderr.write(`[reliability/crash] a killed holder's lock was reclaimed ${waited} ms after the kill\n`)
    expectOk(result)
    // the holder is killed just after taking the lock, so the lock's mtime is the moment of the kill: it turns stale
    // 10 s later, never before (9.5 s allows for the moments between taking the lock and the kill); 12 s leaves the
    // command 2 s to see it (it retries every 25-75 ms), write and exit on a loaded machine. docs/testing.md quotes this bound.
    expect(waited).toBeGreaterThan(9_500)
    expect(waited).toBeLessThan(12_000)
    expect(sb.state(runId).revision).toBe(before.revision + 1)
    expect(existsSync(`${path}.lock`)).toBe(false)
  }, 30_000)

  it('fails with locked (75) within PAIR_LOOP_LOCK_WAIT_MS when another process holds a fresh lock, and changes nothing', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    const path = runStatePath(runId, sb.home)
    const stateBefore = readFileSync(path, 'utf8')
    const holder = await holdLock(path)
    try {
      const env = { PAIR_LOOP_LOCK_WAIT_MS: '600' }
      const commands: string[][] = [
        ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'],
        ['coder-done', '--summary', 'x'],
        ['finish', '--verdict', 'ABANDONED'],
      ]
      for (const args of commands) {
        const started = Date.now()
        const result = await sb.cli(args, { env, input: 'blocked' })
        const elapsed = Date.now() - started
        const waited = expectError(result, 'locked').waited_ms
        expect(waited, 'the whole bound, as really waited').toBeGreaterThanOrEqual(600)
        expect(waited).toBeLessThanOrEqual(elapsed)
        expect(elapsed, `${args[0]} took ${elapsed} ms`).toBeLessThan(600 + 4_000)
      }
      // a reader does not take the lock: status answers, and --wait returns at its bound
      const started = Date.now()
      expect(expectOk(await sb.cli(['status', '--wait', '1'], { env }))).toMatchObject({ changed: false })
      expect(Date.now() - started).toBeLessThan(1_000 + 4_000)
      expect(readFileSync(path, 'utf8')).toBe(stateBefore)
      expect(existsSync(`${path}.lock`), "the live holder's lock is not taken from it").toBe(true)
    } finally {
      holder.kill('SIGKILL')
    }
  }, 30_000)
})
