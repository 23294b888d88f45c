// Setting a PR item aside as a suspected prompt injection: the item (a thread, a conversation comment, a review) is
// looked up in the last pr-check snapshot, then recorded on the run under its lock. Flagged items are listed in
// `threads.flagged_injection[]`, no longer block success, and their text is never acted on; `--clear` takes a flag back.
import { nowIso } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { changeRun } from '../run/run-access.ts'
import type { RunState } from '../run/state.ts'
import { flagKey } from './classify.ts'
import { dropFlag, recordFlag } from './moves.ts'
import type { PrFlagRecord } from '../run/pr-schema.ts'
import { lastSnapshot } from './tick.ts'

export async function flagItem(run: RunState, wanted: { thread?: string; comment?: number }, reason: string) {
  const snapshot = lastSnapshot(run)
  let record: PrFlagRecord
  if (wanted.thread !== undefined) {
    if (!snapshot.threads.some((t) => t.id === wanted.thread))
      fail('usage', `thread ${wanted.thread} is not in the last pr-check snapshot; take ids from pr-check`, {
        flag: '--thread',
        next: 'pr-check',
      })
    record = { kind: 'thread', id: wanted.thread, reason, at: nowIso() }
  } else {
    // a conversation comment, or a review (pr-check lists both by number id)
    const kind = snapshot.comments.some((c) => c.id === wanted.comment)
      ? 'conversation'
      : snapshot.reviews.some((r) => r.id === wanted.comment)
        ? 'review'
        : fail('usage', `comment ${wanted.comment} is not in the last pr-check snapshot; take ids from pr-check`, {
            flag: '--comment',
            next: 'pr-check',
          })
    record = { kind, id: String(wanted.comment), reason, at: nowIso() }
  }
  const key = flagKey(record.kind, record.id)
  const flagged = await changeRun(run.run_id, (state) => recordFlag(state, { key, record }))
  return { run_id: run.run_id, key, flagged, next: 'pr-check' }
}

/** The person cleared a flagged item (`pr-flag --clear`): it is answerable and blocking again. Not flagged is `usage`. */
export async function clearFlag(run: RunState, wanted: { thread?: string; comment?: number }) {
  const keys =
    wanted.thread !== undefined
      ? [flagKey('thread', wanted.thread)]
      : [flagKey('conversation', wanted.comment!), flagKey('review', wanted.comment!)]
  const cleared = await changeRun(run.run_id, (state) => dropFlag(state, keys))
  if (!cleared)
    fail('usage', `${keys.join(' / ')} is not flagged; nothing to clear`, {
      flag: wanted.thread !== undefined ? '--thread' : '--comment',
    })
  return { run_id: run.run_id, key: cleared.key, cleared: cleared.record, next: 'pr-check' }
}
