// Resolving one review thread, confirmed from the mutation's own answer: up to three attempts until GitHub says the
// thread is resolved, then it is recorded under the run's lock; unconfirmed is `resolve_unconfirmed`, nothing recorded.
// A thread nobody answered, or one set aside with pr-flag, is refused before any call (`usage`).
// Resolving is idempotent on GitHub's side, so a retried or concurrent call does no harm; a recorded thread is not asked
// again.
import { nowIso } from '../ground/context.ts'
import { ghTarget } from '../ground/gh.ts'
import { fail } from '../ground/errors.ts'
import { changeRun } from '../run/run-access.ts'
import { settings } from '../ground/settings.ts'
import type { RunState } from '../run/state.ts'
import { graphql } from './github.ts'
import { expectAnswered, refuseFlagged } from './answered.ts'
import { expectPr, recordResolved, watchOf } from './moves.ts'
import { RESOLVE_THREAD } from './queries.ts'

const ATTEMPTS = 3

export async function resolveThread(run: RunState, thread: string, { withoutReply = false } = {}) {
  expectPr(run, 'pr-resolve')
  const recorded = watchOf(run)?.resolved[thread]
  if (recorded) return { run_id: run.run_id, thread, confirmed: true, attempts: 0, already_resolved: true }
  refuseFlagged(run, 'thread', thread)
  if (!withoutReply) expectAnswered(run, thread)
  const waitMs = settings().resolveWaitMs
  let last: unknown = null
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const data = await graphql(ghTarget(run), RESOLVE_THREAD, { threadId: thread })
    last = (data as { resolveReviewThread?: { thread?: unknown } }).resolveReviewThread?.thread ?? null
    if ((last as { isResolved?: unknown } | null)?.isResolved === true) {
      const head = watchOf(run)?.observed?.head ?? null
      await changeRun(run.run_id, (state) =>
        recordResolved(state, { thread, attempts: attempt, head, at: nowIso(), without_reply: withoutReply }),
      )
      return {
        run_id: run.run_id,
        thread,
        confirmed: true,
        attempts: attempt,
        already_resolved: false,
        without_reply: withoutReply,
      }
    }
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, waitMs))
  }
  fail(
    'resolve_unconfirmed',
    `GitHub did not confirm thread ${thread} resolved after ${ATTEMPTS} attempts; nothing recorded`,
    {
      run_id: run.run_id,
      thread,
      attempts: ATTEMPTS,
      last_response: last,
    },
  )
}
