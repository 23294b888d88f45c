// The one home of "claim under the lock, call gh outside it, record under the lock; a failed call lets go of its
// claim" (lib/run/claimed-call.ts), in-process against a run in a temp home; the calls are stand-ins for gh.
import { describe, expect, test } from 'vitest'
import { type ClaimAttempt, callOnce } from '../lib/run/claimed-call.ts'
import { dropClaim, takeClaim } from '../lib/run/claims.ts'
import { type Context, processContext, withContext } from '../lib/ground/context.ts'
import { fail, PairLoopError } from '../lib/ground/errors.ts'
import type { RunState } from '../lib/run/state.ts'
import { createRun, readRun } from '../lib/run/store.ts'
import { tempDir } from './_helpers.ts'
import { runState } from './_state.ts'

const KEY = 'pr:create'
const PID = 4242

/** A Context of its own: a temp home, a fixed pid (whose claims are this call's), no output. */
function quietContext(home: string): Context {
  const quiet = { stdin: (async function* () {})(), stdout: () => {}, stderr: () => {} }
  return processContext(quiet, { home, pid: PID, env: { ...process.env, PAIR_LOOP_HOME: home } })
}

/** A run stored in a fresh home, and a way to run work in that home's Context. */
async function storedRun(): Promise<{
  runId: string
  within: <T>(work: () => Promise<T>) => Promise<T>
  home: string
}> {
  const home = tempDir('pl-claimed-')
  const state = await createRun(runState(), { home })
  return { runId: state.run_id, home, within: (work) => withContext(quietContext(home), work) }
}

const claimMove = (state: RunState, attempt: ClaimAttempt) => takeClaim(state, { key: KEY, ...attempt })
const recordMove = (state: RunState, done: string) => {
  const next = dropClaim(state, { key: KEY, pid: PID }) ?? structuredClone(state)
  next.pr_url = done
  return { state: next, result: 'recorded' as const }
}

describe('callOnce', () => {
  test('records what the call did under the lock, its claim dropped', async () => {
    const { runId, home, within } = await storedRun()
    const called = await within(() =>
      callOnce(runId, KEY, { claim: claimMove, call: async () => 'https://github.com/o/r/pull/1', record: recordMove }),
    )
    expect(called).toEqual({ done: 'https://github.com/o/r/pull/1', recorded: 'recorded' })
    const after = readRun(runId, home)
    expect(after.pr_url).toBe('https://github.com/o/r/pull/1')
    expect(after.claims?.[KEY]).toBeUndefined()
  })

  test('lets go of the claim when the call fails, and fails with the call’s own error', async () => {
    const { runId, home, within } = await storedRun()
    const refused = new PairLoopError('gh_error', 'gh pr create failed: HTTP 502')
    const outcome = within(() =>
      callOnce(runId, KEY, { claim: claimMove, call: () => Promise.reject(refused), record: recordMove }),
    )
    await expect(outcome).rejects.toBe(refused)
    const after = readRun(runId, home)
    expect(after.claims?.[KEY]).toBeUndefined()
    expect(after.pr_url).toBeNull()
  })

  test('makes no call when the claim move refuses', async () => {
    const { runId, within } = await storedRun()
    let calls = 0
    const outcome = within(() =>
      callOnce(runId, KEY, {
        claim: () => fail('duplicate_reply', 'already posted'),
        call: async () => {
          calls++
          return 'posted'
        },
        record: recordMove,
      }),
    )
    await expect(outcome).rejects.toMatchObject({ code: 'duplicate_reply' })
    expect(calls).toBe(0)
  })
})
