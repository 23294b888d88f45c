// What a `pr-reply` answers, found in the snapshot the last `pr-check` wrote: the reviewer comment answered (the key),
// where the answer goes on GitHub, and whether it answers a review bot.
import { fail } from '../errors.ts'
import type { RunState } from '../state.ts'
import { authorClass, conversationKey, type People, reviewKey, threadKey, versionOf } from './classify.ts'
import type { PrReplyRecord } from './schema.ts'
import { lastSnapshot } from './tick.ts'

export type AnswerKind = Exclude<PrReplyRecord['kind'], 'review-findings'>

export interface AnswerTarget {
  kind: AnswerKind
  key: string
  /** The REST endpoint the answer is posted to. */
  endpoint: string
  to_bot: boolean
  head: string
}

export function findTarget(
  run: RunState,
  pr: number,
  bots: readonly string[],
  wanted: { thread?: string; comment?: number; review?: number },
): AnswerTarget {
  const snapshot = lastSnapshot(run)
  if (snapshot.pr.number !== pr)
    fail(
      'usage',
      `the last pr-check snapshot is of PR #${snapshot.pr.number}, not #${pr}; run \`pair-loop pr-check\``,
      {
        run_id: run.run_id,
        next: 'pr-check',
      },
    )
  const people: People = { author: snapshot.pr.author, bots }
  const isBot = (login: string, type?: string) => authorClass(login, type, people) === 'review_bot'
  const head = snapshot.pr.head
  const notFound = (what: string, flag: string): never =>
    fail('usage', `${what} is not in the last pr-check snapshot; run \`pair-loop pr-check\` and take ids from it`, {
      flag,
      next: 'pr-check',
    })

  if (wanted.thread !== undefined) {
    const thread =
      snapshot.threads.find((t) => t.id === wanted.thread) ?? notFound(`thread ${wanted.thread}`, '--thread')
    const answered = [...thread.comments]
      .reverse()
      .find((c) => authorClass(c.author, c.author_type, people) !== 'author')
    if (!answered || !thread.comments[0])
      fail('usage', `thread ${thread.id} has no reviewer comment to answer`, { flag: '--thread', thread: thread.id })
    return {
      kind: 'thread',
      key: threadKey(thread.id, answered.database_id, versionOf(answered)),
      endpoint: `repos/{owner}/{repo}/pulls/${pr}/comments/${thread.comments[0].database_id}/replies`,
      to_bot: isBot(answered.author, answered.author_type),
      head,
    }
  }
  if (wanted.comment !== undefined) {
    const comment =
      snapshot.comments.find((c) => c.id === wanted.comment) ?? notFound(`comment ${wanted.comment}`, '--comment')
    return {
      kind: 'conversation',
      key: conversationKey(comment.id, versionOf(comment)),
      endpoint: `repos/{owner}/{repo}/issues/${pr}/comments`,
      to_bot: isBot(comment.author, comment.author_type),
      head,
    }
  }
  const review = snapshot.reviews.find((r) => r.id === wanted.review) ?? notFound(`review ${wanted.review}`, '--review')
  return {
    kind: 'review',
    key: reviewKey(review.id, versionOf(review)),
    endpoint: `repos/{owner}/{repo}/issues/${pr}/comments`,
    to_bot: isBot(review.author, review.author_type),
    head,
  }
}
