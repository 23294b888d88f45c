// The PR phase's shapes, one valibot schema each: the snapshot a tick collects (DESIGN.md's replay contract), what the
// run keeps of the PR between ticks, and the claims on gh side effects in flight. Types derived from the schemas.
import * as v from 'valibot'

const Timestamp = v.pipe(v.string(), v.isoTimestamp())
const Count = v.pipe(v.number(), v.integer(), v.minValue(0))
const Text = v.string()
const When = v.nullable(v.string())

export const PR_STATES = ['OPEN', 'MERGED', 'CLOSED'] as const
export const MERGEABLE = ['MERGEABLE', 'CONFLICTING', 'UNKNOWN'] as const
export const CHECK_STATUSES = ['pass', 'pending', 'fail'] as const
export const REVIEW_STATES = ['CHANGES_REQUESTED', 'COMMENTED', 'APPROVED', 'DISMISSED', 'PENDING'] as const

export const SnapshotComment = v.object({
  id: Text,
  database_id: Count,
  author: Text,
  author_type: v.optional(Text, 'User'),
  body: Text,
  created_at: When,
  /** GitHub's lastEditedAt: null when never edited; an edit after an answer makes the comment new again. */
  last_edited_at: v.optional(When, null),
  url: v.optional(When, null),
  /** The PR review the comment was posted with (GitHub's pullRequestReview), if any: the final round's are ours. */
  review_id: v.optional(v.nullable(Count), null),
})

export const SnapshotThread = v.object({
  id: Text,
  path: v.nullable(Text),
  line: v.nullable(Count),
  is_resolved: v.boolean(),
  is_outdated: v.boolean(),
  comments: v.array(SnapshotComment),
})

/**
 * An Actions run a `github-actions[bot]` comment links to (`/actions/runs/ID`), as GitHub's REST API reports it: which
 * workflow file ran (`path`) and when, so `pr_action_reviews` can tell which workflow's comment it may be.
 */
export const ActionRun = v.object({
  id: Count,
  name: v.optional(When, null),
  path: v.optional(When, null),
  event: v.optional(When, null),
  status: v.optional(When, null),
  run_started_at: v.optional(When, null),
  updated_at: v.optional(When, null),
})

export const Snapshot = v.object({
  version: v.literal(1),
  pr: v.object({
    number: v.pipe(Count, v.minValue(1)),
    url: Text,
    head: Text,
    branch: Text,
    base: Text,
    author: Text,
    state: v.picklist(PR_STATES),
    mergeable: v.picklist(MERGEABLE),
    review_decision: v.optional(v.nullable(Text), null),
    merged_at: v.optional(When, null),
  }),
  checks: v.array(v.object({ name: Text, status: v.picklist(CHECK_STATUSES), url: v.optional(When, null) })),
  threads: v.array(SnapshotThread),
  comments: v.array(
    v.object({
      id: Count,
      author: Text,
      author_type: v.optional(Text, 'User'),
      body: Text,
      created_at: When,
      last_edited_at: v.optional(When, null),
      url: v.optional(When, null),
    }),
  ),
  reviews: v.array(
    v.object({
      id: Count,
      author: Text,
      author_type: v.optional(Text, 'User'),
      state: v.picklist(REVIEW_STATES),
      body: Text,
      submitted_at: When,
      last_edited_at: v.optional(When, null),
      url: v.optional(When, null),
    }),
  ),
  /** The Actions runs `github-actions[bot]` comments link to (read when a `pr_action_reviews` entry names a workflow). */
  action_runs: v.optional(v.array(ActionRun)),
})

export type Snapshot = v.InferOutput<typeof Snapshot>
export type ActionRun = v.InferOutput<typeof ActionRun>
export type SnapshotThread = v.InferOutput<typeof SnapshotThread>
export type SnapshotComment = v.InferOutput<typeof SnapshotComment>

/** A gh side effect in flight (a PR being opened, a reply being posted), claimed under the run's lock. */
export const SideClaim = v.object({ pid: v.pipe(v.number(), v.integer()), host: Text, at: Timestamp })
export type SideClaim = v.InferOutput<typeof SideClaim>

export const PrReplyRecord = v.object({
  kind: v.picklist(['thread', 'conversation', 'review', 'review-findings']),
  comment_id: Count,
  url: Text,
  at: Timestamp,
  head: v.nullable(Text),
  /** Answered a review bot. */
  to_bot: v.boolean(),
  /** The bot's findings this answer answered (its thread's, or those `--finding` named in its summary): recurrence. */
  finding_keys: v.optional(v.array(Text), []),
})
export type PrReplyRecord = v.InferOutput<typeof PrReplyRecord>

/** An item set aside as a suspected prompt injection (pr-flag): why, when, and what it was. */
export const PrFlagRecord = v.object({
  kind: v.picklist(['thread', 'conversation', 'review']),
  id: Text,
  reason: Text,
  at: Timestamp,
})
export type PrFlagRecord = v.InferOutput<typeof PrFlagRecord>

/** The last values a tick saw: a tick that sees the same ones is not a change. */
export const PrObserved = v.object({
  fingerprint: Text,
  state: v.picklist(PR_STATES),
  head: Text,
  head_seen_at: Timestamp,
  ci_status: v.picklist(CHECK_STATUSES),
  mergeable: v.picklist(MERGEABLE),
  unresolved: Count,
  verdict_state: Text,
  /** The bot summary read (its id and a hash of its body): a new one is a new verdict. */
  verdict_comment: v.nullable(Text),
  finding_keys: v.array(Text),
  /** What the tick asked for: a push after one that wanted changes is a fix attempt. */
  wanted_changes: v.boolean(),
})
export type PrObserved = v.InferOutput<typeof PrObserved>

/** The PR phase on the run: what pr-check saw, what was posted or resolved, and the counters that escalate. */
export const PrWatch = v.object({
  pr: v.pipe(Count, v.minValue(1)),
  ticks: Count,
  last_tick_at: v.nullable(Timestamp),
  idle_streak: Count,
  wait_s: Count,
  decision: v.nullable(v.picklist(['keep_going', 'success', 'escalate'])),
  observed: v.nullable(PrObserved),
  merged_at: v.nullable(Text),
  closed_at: v.optional(v.nullable(Timestamp), null),
  fix_attempts: Count,
  /** Keys of a review bot's findings that a reply answered (in the finding's thread, or naming it in the summary). */
  answered_keys: v.array(Text),
  recurring_keys: v.array(Text),
  /**
   * The finding keys of the bot's last complete verdict run, each with how many runs in a row before it listed the key
   * unanswered (0: new on that run): two is the streak that escalates.
   */
  finding_streaks: v.optional(v.record(Text, Count), {}),
  provider_errors: v.object({ head: v.nullable(Text), count: Count }),
  /** Replies posted, by the reviewer comment answered: `thread:<id>@<comment>`, `conversation:<id>`, `review:<id>`. */
  replied: v.record(Text, PrReplyRecord),
  resolved: v.record(
    Text,
    v.object({
      at: Timestamp,
      attempts: Count,
      head: v.nullable(Text),
      /** Resolved with nobody's answer recorded: the person's choice (`pr-resolve --without-reply`), listed in status. */
      without_reply: v.optional(v.boolean(), false),
    }),
  ),
  /**
   * Answers GitHub took but whose answer carried no comment id (`pr-reply`): by key, the body's hash. The next tick looks
   * for that hash among the PR's comments (then it is recorded as replied) before anything posts that answer again.
   */
  unconfirmed: v.optional(
    v.record(
      Text,
      v.object({
        kind: v.picklist(['thread', 'conversation', 'review', 'review-findings']),
        body_sha256: Text,
        at: Timestamp,
        head: v.nullable(Text),
        to_bot: v.boolean(),
        finding_keys: v.optional(v.array(Text), []),
      }),
    ),
    {},
  ),
  /** Items set aside with pr-flag, by `thread:<id>`, `conversation:<id>`, `review:<id>`. */
  flagged: v.optional(v.record(Text, PrFlagRecord), {}),
  /** The watch ended by pr-stop (the person took over): pr-check still reads, but names no next step. */
  stopped: v.optional(v.nullable(v.object({ at: Timestamp, reason: v.nullable(Text) })), null),
  /** The last tick that failed (gh, the head moving, the disk): kept until a tick succeeds. */
  last_error: v.optional(v.nullable(v.object({ code: Text, message: Text, at: Timestamp })), null),
  snapshot_path: v.nullable(Text),
  /** The last tick's head was not the newest approved tree: `push` it (an older approved tree) or `coder-done`. */
  head_next: v.optional(v.nullable(v.picklist(['push', 'coder-done']))),
})
export type PrWatch = v.InferOutput<typeof PrWatch>
