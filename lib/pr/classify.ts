// Who is who on a PR (its author, the review bots, other bots, people) and what of theirs needs an answer: threads,
// conversation comments, reviews. Pure: a snapshot and the replies recorded on the run in, lists out.
import { hexDigest } from '../ground/digest.ts'
import type { ActionReview } from '../run/config.ts'
import { ACTIONS_LOGIN, type ActionIdentity, identifiesActionReview, type Posted, repoUrlOf } from './action-reviews.ts'
import { injectionOf, type InjectionPattern } from './injection.ts'
import type { PrFlagRecord, PrReplyRecord, Snapshot, SnapshotComment, SnapshotThread } from '../run/pr-schema.ts'

/** `unknown_bot`: an account of type Bot outside `pr_bots` (dependabot, a lint workflow): its threads still count. */
export type AuthorClass = 'author' | 'review_bot' | 'unknown_bot' | 'human'

export interface People {
  /** The PR's author: the agent's side, whose comments are answers. */
  author: string
  /** Review-bot logins (`pair_loop.pr_bots`), as REST spells a bot: with `[bot]` (added when a config left it out). */
  bots: readonly string[]
  /** What makes a `github-actions[bot]` comment a review (`pair_loop.pr_action_reviews`); none: it never is one. */
  actions?: ActionIdentity
}

/** Who is who on the snapshot's PR, by the run's frozen config. */
export const peopleOf = (
  snapshot: Snapshot,
  bots: readonly string[],
  actionReviews: readonly ActionReview[] = [],
): People => ({
  author: snapshot.pr.author,
  bots,
  actions: { rules: actionReviews, runs: snapshot.action_runs ?? [], repo_url: repoUrlOf(snapshot.pr.url) },
})

// GitHub logins are case-insensitive; a bot's REST login always ends in `[bot]`
const asBotLogin = (login: string) => {
  const lower = login.toLowerCase()
  return lower.endsWith('[bot]') ? lower : `${lower}[bot]`
}

/**
 * Who wrote it, by identity: a review bot is an account of type Bot whose login is in `pr_bots`; a User is a person
 * whatever its login (a human account named `coderabbitai` or `claude` is not the bot). `github-actions[bot]` is a
 * review bot when `pr_bots` names it (every workflow's comment is then read), else only for a comment (`posted`) a
 * `pr_action_reviews` entry identifies; any other bot is an unknown bot.
 */
export function authorClass(login: string, type: string | undefined, people: People, posted?: Posted): AuthorClass {
  // logins are unique (a bot's carries `[bot]`), so the PR author's login is the author
  if (login.toLowerCase() === people.author.toLowerCase()) return 'author'
  if (type !== 'Bot') return 'human'
  // the person named it in pr_bots: whatever posts as it is read as a reviewer, github-actions[bot] included
  if (people.bots.some((bot) => asBotLogin(bot) === asBotLogin(login))) return 'review_bot'
  // every workflow posts as github-actions[bot], one a PR adds too: its login says nothing of which workflow wrote it
  if (asBotLogin(login) === ACTIONS_LOGIN && posted && people.actions && identifiesActionReview(posted, people.actions))
    return 'review_bot'
  return 'unknown_bot'
}

/** The version of a comment an answer answers: none while never edited, else a hash of the edited body. */
export const versionOf = (c: { body: string; last_edited_at?: string | null }) =>
  c.last_edited_at ? `~${hexDigest(c.body).slice(0, 8)}` : ''

/**
 * The idempotency key of an answer: the reviewer comment it answers, and its version, so a follow-up, or an edit
 * after the answer, is answerable again.
 */
export const threadKey = (threadId: string, answered: number, version = '') =>
  `thread:${threadId}@${answered}${version}`
export const conversationKey = (id: number, version = '') => `conversation:${id}${version}`
export const reviewKey = (id: number, version = '') => `review:${id}${version}`
/** The key an item set aside with pr-flag is recorded under: the item, whatever its later comments. */
export const flagKey = (kind: 'thread' | 'conversation' | 'review', id: string | number) => `${kind}:${id}`

export type Flagged = Record<string, PrFlagRecord>

export interface ThreadView {
  id: string
  path: string | null
  line: number | null
  is_outdated: boolean
  root_comment_id: number
  /** The reviewer comment an answer replies to (the latest one not by the PR's author). */
  in_reply_to: number
  key: string
  author_class: AuthorClass
  last_comment_author: string
  last_comment_at: string | null
  comments: SnapshotComment[]
  injection_suspect: boolean
  injection_pattern: InjectionPattern | null
}

export interface ThreadAudit {
  total: number
  /** Open threads that count, whoever started them: not resolved, not outdated, not flagged. */
  unresolved: number
  /** Threads whose latest word is a reviewer's, not answered by a recorded reply. */
  actionable: ThreadView[]
  /** Answered (by the author, or a reply recorded) but not resolved: resolve them, no new reply. */
  stale_unresolved: ThreadView[]
  /** Outdated threads: skipped (the line they were on is gone). */
  skipped_outdated: string[]
  /** Open threads set aside with pr-flag (suspected prompt injection): listed, never blocking. */
  flagged: string[]
  /** pair-loop's own inline comments of the final round (`pr-reply --review-findings`) nobody else wrote in: not to answer. */
  own_final_round: string[]
}

export function auditThreads(
  threads: SnapshotThread[],
  people: People,
  replied: Record<string, PrReplyRecord>,
  flagged: Flagged = {},
  /** The PR reviews pair-loop posted for the final round (their ids). */
  ownReviews: ReadonlySet<number> = new Set(),
) {
  const audit: ThreadAudit = {
    total: threads.length,
    unresolved: 0,
    actionable: [],
    stale_unresolved: [],
    skipped_outdated: [],
    flagged: [],
    own_final_round: [],
  }
  for (const thread of threads) {
    const root = thread.comments[0]
    if (thread.is_resolved || !root) continue
    if (flagged[flagKey('thread', thread.id)]) {
      audit.flagged.push(thread.id)
      continue
    }
    // the final round's findings are answered in the coder round they opened, not here; a reply in the thread is not ours
    const ours = root.review_id != null && ownReviews.has(root.review_id)
    if (ours && thread.comments.every((c) => c.author.toLowerCase() === root.author.toLowerCase())) {
      audit.own_final_round.push(thread.id)
      continue
    }
    const rootClass = authorClass(root.author, root.author_type, people, root)
    // the seed's audit set: every open, non-outdated, unflagged thread, a person's or any bot's
    if (thread.is_outdated) {
      audit.skipped_outdated.push(thread.id)
      continue
    }
    audit.unresolved++
    const view = viewOf(thread, rootClass, people)
    const last = thread.comments.at(-1)!
    const lastIsReviewer = authorClass(last.author, last.author_type, people, last) !== 'author'
    // a reviewer comment edited after the author's last word is new content, as a follow-up would be
    const answeredComment = thread.comments.find((c) => c.database_id === view.in_reply_to)
    const lastAuthorAt = thread.comments
      .filter((c) => authorClass(c.author, c.author_type, people, c) === 'author')
      .reduce((latest, c) => (c.created_at && c.created_at > latest ? c.created_at : latest), '')
    const editedSince = Boolean(answeredComment?.last_edited_at && answeredComment.last_edited_at > lastAuthorAt)
    if ((lastIsReviewer || editedSince) && !replied[view.key]) audit.actionable.push(view)
    else audit.stale_unresolved.push(view)
  }
  return audit
}

function viewOf(thread: SnapshotThread, rootClass: AuthorClass, people: People): ThreadView {
  const last = thread.comments.at(-1)!
  const answered =
    [...thread.comments].reverse().find((c) => authorClass(c.author, c.author_type, people, c) !== 'author') ?? last
  return {
    id: thread.id,
    path: thread.path,
    line: thread.line,
    is_outdated: thread.is_outdated,
    root_comment_id: thread.comments[0]!.database_id,
    in_reply_to: answered.database_id,
    key: threadKey(thread.id, answered.database_id, versionOf(answered)),
    author_class: rootClass,
    last_comment_author: last.author,
    last_comment_at: last.created_at,
    comments: thread.comments,
    ...injectionOf(
      thread.comments.filter((c) => authorClass(c.author, c.author_type, people, c) !== 'author').map((c) => c.body),
    ),
  }
}

/**
 * A person's conversation comments not answered: no reply recorded for it (its key), and no later comment of the
 * author's that links it (its `#issuecomment-<id>` anchor, as GitHub's "Quote reply"/"Copy link" give it). Linking, not
 * quoting: a link names one comment, a quote's words may be in several. Another comment's answer answers only that one.
 */
export function actionableComments(
  snapshot: Snapshot,
  people: People,
  replied: Record<string, PrReplyRecord>,
  flagged: Flagged = {},
) {
  const byAuthor = snapshot.comments.filter((c) => authorClass(c.author, c.author_type, people, c) === 'author')
  const linkedLater = (c: Snapshot['comments'][number]) => {
    const written = c.last_edited_at ?? c.created_at // an edit after the author's answer is new content
    const anchor = new RegExp(`#issuecomment-${c.id}(?!\\d)`)
    return byAuthor.some((a) => Boolean(written && a.created_at && a.created_at > written && anchor.test(a.body)))
  }
  return snapshot.comments
    .filter((c) => authorClass(c.author, c.author_type, people, c) === 'human')
    .filter((c) => !linkedLater(c))
    .filter((c) => !replied[conversationKey(c.id, versionOf(c))] && !flagged[flagKey('conversation', c.id)])
    .map((c) => ({ ...c, key: conversationKey(c.id, versionOf(c)), ...injectionOf([c.body]) }))
}

/** A person's reviews that asked for something (not an approval, with a body) and have no recorded reply. */
export function actionableReviews(
  snapshot: Snapshot,
  people: People,
  replied: Record<string, PrReplyRecord>,
  flagged: Flagged = {},
) {
  return snapshot.reviews
    .filter((r) => authorClass(r.author, r.author_type, people, r) === 'human')
    .filter((r) => (r.state === 'CHANGES_REQUESTED' || r.state === 'COMMENTED') && r.body.trim() !== '')
    .filter((r) => !replied[reviewKey(r.id, versionOf(r))] && !flagged[flagKey('review', r.id)])
    .map((r) => ({ ...r, key: reviewKey(r.id, versionOf(r)), ...injectionOf([r.body]) }))
}
