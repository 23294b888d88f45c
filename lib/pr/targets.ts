// What a `pr-reply` answers, found in the snapshot the last `pr-check` wrote: the reviewer comment answered (the key),
// where the answer goes on GitHub, and whether it answers a review bot.
import { fail } from '../ground/errors.ts'
import type { RunState } from '../run/state.ts'
import { findingKey, parseFindings } from '../run/grammar.ts'
import type { ActionReview } from '../run/config.ts'
import type { Posted } from './action-reviews.ts'
import { authorClass, conversationKey, peopleOf, reviewKey, threadKey, versionOf } from './classify.ts'
import type { PrReplyRecord, SnapshotThread } from '../run/pr-schema.ts'
import { lastSnapshot } from './tick.ts'
import { type BotVerdict, readBotVerdict } from './verdict.ts'

export type AnswerKind = Exclude<PrReplyRecord['kind'], 'review-findings'>

export interface AnswerTarget {
  kind: AnswerKind
  key: string
  /** The REST endpoint the answer is posted to. */
  endpoint: string
  to_bot: boolean
  head: string
  /** The review bot's findings this answer answers (recurrence counts only these as answered). */
  finding_keys: string[]
}

export function findTarget(
  run: RunState,
  pr: number,
  bots: readonly string[],
  wanted: { thread?: string; comment?: number; review?: number; findings?: number[] },
  actionReviews: readonly ActionReview[] = [],
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
  const people = peopleOf(snapshot, bots, actionReviews)
  const isBot = (item: { author: string; author_type?: string } & Posted) =>
    authorClass(item.author, item.author_type, people, item) === 'review_bot'
  const head = snapshot.pr.head
  const notFound = (what: string, flag: string): never =>
    fail('usage', `${what} is not in the last pr-check snapshot; run \`pair-loop pr-check\` and take ids from it`, {
      flag,
      next: 'pr-check',
    })

  const verdict = readBotVerdict(snapshot, people)

  if (wanted.thread !== undefined) {
    if (wanted.findings)
      fail('usage', "--finding names findings of a review bot's summary; a thread reply answers the thread's own", {
        flag: '--finding',
      })
    const thread =
      snapshot.threads.find((t) => t.id === wanted.thread) ?? notFound(`thread ${wanted.thread}`, '--thread')
    const answered = [...thread.comments]
      .reverse()
      .find((c) => authorClass(c.author, c.author_type, people, c) !== 'author')
    if (!answered || !thread.comments[0])
      fail('usage', `thread ${thread.id} has no reviewer comment to answer`, { flag: '--thread', thread: thread.id })
    return {
      kind: 'thread',
      key: threadKey(thread.id, answered.database_id, versionOf(answered)),
      endpoint: `repos/{owner}/{repo}/pulls/${pr}/comments/${thread.comments[0].database_id}/replies`,
      to_bot: isBot(answered),
      head,
      finding_keys: isBot(thread.comments[0]) ? threadFindingKeys(thread, answered.body, verdict) : [],
    }
  }
  if (wanted.comment !== undefined) {
    const comment =
      snapshot.comments.find((c) => c.id === wanted.comment) ?? notFound(`comment ${wanted.comment}`, '--comment')
    return {
      kind: 'conversation',
      key: conversationKey(comment.id, versionOf(comment)),
      endpoint: `repos/{owner}/{repo}/issues/${pr}/comments`,
      to_bot: isBot(comment),
      head,
      finding_keys: summaryFindingKeys(verdict, { kind: 'comment', id: comment.id }, wanted.findings),
    }
  }
  const review = snapshot.reviews.find((r) => r.id === wanted.review) ?? notFound(`review ${wanted.review}`, '--review')
  return {
    kind: 'review',
    key: reviewKey(review.id, versionOf(review)),
    endpoint: `repos/{owner}/{repo}/issues/${pr}/comments`,
    to_bot: isBot(review),
    head,
    finding_keys: summaryFindingKeys(verdict, { kind: 'review', id: review.id }, wanted.findings),
  }
}

/** A bot thread's reply answers the findings its bot comment states, and the summary's findings at its line. */
function threadFindingKeys(thread: SnapshotThread, answeredBody: string, verdict: BotVerdict): string[] {
  const own = parseFindings(answeredBody).map((finding) => findingKey(finding))
  const atLine = verdict.findings.filter(
    (f) =>
      f.path !== null &&
      f.path === thread.path &&
      f.line !== null &&
      thread.line !== null &&
      f.line <= thread.line &&
      thread.line <= (f.line_end ?? f.line),
  )
  return [...new Set([...own, ...atLine.map((f) => f.key)])]
}

/**
 * A reply to the bot's summary answers the findings `--finding` names (by their number in `verdict.findings`), or the
 * only one it lists; a summary of several findings answered without `--finding` has none of them answered.
 */
function summaryFindingKeys(
  verdict: BotVerdict,
  target: { kind: 'comment' | 'review'; id: number },
  numbers: number[] | undefined,
): string[] {
  const isSummary = verdict.kind === target.kind && verdict.comment_id === target.id
  if (!isSummary) {
    if (numbers)
      fail('usage', `--finding names findings of the review bot's summary; ${target.kind} ${target.id} is not it`, {
        flag: '--finding',
        summary: verdict.comment_id === null ? null : { kind: verdict.kind, id: verdict.comment_id },
      })
    return []
  }
  if (!numbers) return verdict.findings.length === 1 ? [verdict.findings[0]!.key] : []
  return numbers.map((n) => {
    const finding = verdict.findings.find((f) => f.n === n)
    if (!finding)
      fail('usage', `the review bot's summary has no finding ${n} (it lists ${verdict.findings.length})`, {
        flag: '--finding',
        findings: verdict.findings.map((f) => f.n),
      })
    return finding.key
  })
}
