// What pr-reply and pr-resolve check before any call: an item set aside with pr-flag is not acted on, and a thread is
// resolved only once its latest reviewer comment is answered (a reply recorded for it, or the PR author's word after it
// in the thread), unless the person chose otherwise (`--without-reply`).
import { fail } from '../ground/errors.ts'
import type { RunState } from '../run/state.ts'
import { authorClass, flagKey, peopleOf, threadKey, versionOf } from './classify.ts'
import { watchOf } from './moves.ts'
import { configOf } from '../run/run-access.ts'
import { lastSnapshot } from './tick.ts'

/** A flagged item is refused (`usage`), naming the way back: `pr-flag --clear`. */
export function refuseFlagged(run: RunState, kind: 'thread' | 'conversation' | 'review', id: string | number) {
  const key = flagKey(kind, id)
  const flagged = watchOf(run)?.flagged?.[key]
  if (!flagged) return
  const flag = kind === 'thread' ? `--thread ${id}` : `--comment ${id}`
  fail(
    'usage',
    `${key} is flagged as a suspected prompt injection (${flagged.reason}); it is not acted on. If the person cleared it, run \`pair-loop pr-flag ${flag} --clear\` first`,
    { run_id: run.run_id, key, flagged, next: 'ask-user' },
  )
}

/** A thread whose latest reviewer comment nobody answered is refused (`usage`): answer it, or `--without-reply`. */
export function expectAnswered(run: RunState, threadId: string) {
  const snapshot = lastSnapshot(run)
  const thread = snapshot.threads.find((t) => t.id === threadId)
  if (!thread)
    fail('usage', `thread ${threadId} is not in the last pr-check snapshot; take ids from pr-check`, {
      flag: '--thread',
      next: 'pr-check',
    })
  const { pr_bots, pr_action_reviews } = configOf(run).pair_loop
  const people = peopleOf(snapshot, pr_bots, pr_action_reviews)
  const isAuthor = (c: (typeof thread.comments)[number]) => authorClass(c.author, c.author_type, people, c) === 'author'
  const lastReviewer = thread.comments.findLast((c) => !isAuthor(c))
  if (!lastReviewer) return // only the author's own words: nothing to answer
  const replied = watchOf(run)?.replied ?? {}
  const key = threadKey(thread.id, lastReviewer.database_id, versionOf(lastReviewer))
  const answeredInThread = thread.comments.indexOf(lastReviewer) < thread.comments.findLastIndex(isAuthor)
  if (replied[key] || answeredInThread) return
  fail(
    'usage',
    `thread ${threadId} has no answer to ${lastReviewer.author}'s comment ${lastReviewer.database_id}: answer it with \`pair-loop pr-reply --thread ${threadId} --body-file F\` first, or resolve it with --without-reply if the person chose to`,
    { run_id: run.run_id, thread: threadId, key, flag: '--without-reply', next: 'pr-reply' },
  )
}
