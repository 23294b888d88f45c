// The PR phase's reducer on snapshots alone (no process, no network, no clock): table-driven, every reason code, the
// decision rules of DESIGN.md, who is who, backoff and the counters that escalate.
import { describe, expect, it } from 'vitest'
import { DEFAULT_PR_BOTS } from '../lib/run/config.ts'
import { REASON_CODES, type ReasonCode } from '../lib/pr/reasons.ts'
import { emptyWatch, reducePr } from '../lib/pr/reduce.ts'
import type { PrWatch, Snapshot } from '../lib/run/pr-schema.ts'
import { findingKey } from '../lib/run/grammar.ts'
import { at, BOT, botSample, botSummary, comment, issueComment, ME, review, snapshot, T0, thread } from './_pr.ts'

const bots = [...DEFAULT_PR_BOTS]
type Shipped = NonNullable<Parameters<typeof reducePr>[2]['shipped']>
const reduce = (
  snap: Snapshot,
  previous: PrWatch | null = null,
  now = at(30),
  shipped: Shipped | null = null,
  notApproved: string | null = null,
) => reducePr(snap, previous, { now, bots, shipped, not_approved: notApproved })
const codes = (result: { reasons: Array<{ code: ReasonCode }> }) => result.reasons.map((r) => r.code)

/** A watch as a first tick on `snap` left it (so the next tick compares with it). */
const watchAfter = (snap: Snapshot, now = at(30)) => reduce(snap, null, now).watch

const botThread = thread('PRRT_bot', [comment(11, BOT, 'off by one in the loop bound')])
const answeredThread = thread('PRRT_answered', [comment(11, BOT, 'off by one'), comment(12, ME, 'Fixed in abc123', 2)])

interface Case {
  name: string
  snap: Snapshot
  previous?: PrWatch
  now?: string
  decision: 'keep_going' | 'success' | 'escalate'
  has: ReasonCode[]
  shipped?: Shipped
  /** The run ended with this verdict, not APPROVED. */
  not_approved?: string
}

const cases: Case[] = [
  {
    name: 'green PR',
    snap: snapshot(),
    decision: 'success',
    has: ['ci_pass', 'threads_clear', 'review_absent'],
  },
  {
    name: 'pending CI',
    snap: snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] }),
    decision: 'keep_going',
    has: ['ci_pending'],
  },
  {
    name: 'failing CI',
    snap: snapshot({
      checks: [
        { name: 'ci', status: 'fail', url: null },
        { name: 'lint', status: 'pass', url: null },
      ],
    }),
    decision: 'keep_going',
    has: ['ci_failed'],
  },
  {
    name: 'no check yet, just after the push',
    snap: snapshot({ checks: [] }),
    now: T0,
    decision: 'keep_going',
    has: ['ci_pending'],
  },
  {
    name: 'no check at all, long after the head was first seen',
    snap: snapshot({ checks: [] }),
    previous: watchAfter(snapshot({ checks: [] }), T0),
    now: at(11),
    decision: 'success',
    has: ['ci_pass'],
  },
  {
    name: 'unresolved bot thread',
    snap: snapshot({ threads: [botThread] }),
    decision: 'keep_going',
    has: ['threads_unresolved'],
  },
  {
    name: 'stale unresolved thread (answered, not resolved)',
    snap: snapshot({ threads: [answeredThread] }),
    decision: 'keep_going',
    has: ['threads_stale_unresolved'],
  },
  {
    name: "a person's conversation comment",
    snap: snapshot({ comments: [issueComment(21, 'alice', 'Why a new dependency?')] }),
    decision: 'keep_going',
    has: ['comments_unanswered'],
  },
  {
    name: "a person's review asking for changes",
    snap: snapshot({ reviews: [review(31, 'alice', 'CHANGES_REQUESTED', 'Please split this file.')] }),
    decision: 'keep_going',
    has: ['comments_unanswered'],
  },
  {
    name: 'bot verdict: changes',
    snap: snapshot({ comments: [botSummary(41, 'CHANGES_REQUESTED', ['off by one'])] }),
    decision: 'keep_going',
    has: ['review_changes'],
  },
  {
    name: 'bot verdict: approved',
    snap: snapshot({ comments: [botSummary(41, 'APPROVED')] }),
    decision: 'success',
    has: ['review_approved'],
  },
  {
    name: 'bot still reviewing',
    snap: snapshot({ comments: [issueComment(41, BOT, botSample('coderabbit-in-progress'))] }),
    decision: 'keep_going',
    has: ['review_in_progress'],
  },
  {
    name: "a finished summary saying 'failed' and 'pending' is unknown: success, to be checked by hand",
    snap: snapshot({ comments: [issueComment(41, 'claude[bot]', botSample('claude-finished-prose'))] }),
    decision: 'success',
    has: ['review_unknown_format', 'manual_verify'],
  },
  {
    name: 'no bot verdict at all: success, degraded, to be checked by hand',
    snap: snapshot(),
    decision: 'success',
    has: ['review_absent', 'manual_verify'],
  },
  {
    name: 'an approval that still lists two findings is not a clean approval',
    snap: snapshot({ comments: [botSummary(41, 'APPROVED', ['a blocker', 'another blocker'])] }),
    decision: 'keep_going',
    has: ['review_changes'],
  },
  {
    name: 'an approval with zero findings',
    snap: snapshot({ comments: [botSummary(41, 'APPROVED')] }),
    decision: 'success',
    has: ['review_approved'],
  },
  {
    name: 'bot summary without a verdict line: success, to be checked by hand',
    snap: snapshot({ comments: [issueComment(41, BOT, 'Thanks for the PR! Walkthrough below.')] }),
    decision: 'success',
    has: ['review_unknown_format', 'manual_verify'],
  },
  {
    name: 'bot provider error, once',
    snap: snapshot({ comments: [issueComment(41, BOT, botSample('coderabbit-rate-limited'))] }),
    decision: 'keep_going',
    has: ['provider_error'],
  },
  {
    name: 'bot provider error twice on one head',
    snap: snapshot({ comments: [issueComment(42, 'claude[bot]', botSample('claude-error'), 9)] }),
    previous: watchAfter(snapshot({ comments: [issueComment(41, 'claude[bot]', botSample('claude-error'))] })),
    decision: 'escalate',
    has: ['provider_error_repeated'],
  },
  {
    // the count is per head: a mutant that keeps counting across heads escalated here
    name: 'bot provider error on one head, then once on a new head',
    snap: snapshot({
      pr: { head: 'b'.repeat(40) },
      comments: [issueComment(42, 'claude[bot]', botSample('claude-error'), 9)],
    }),
    previous: watchAfter(snapshot({ comments: [issueComment(41, 'claude[bot]', botSample('claude-error'))] })),
    decision: 'keep_going',
    has: ['provider_error'],
  },
  {
    name: 'merged',
    snap: snapshot({ pr: { state: 'MERGED', merged_at: at(20) } }),
    decision: 'escalate',
    has: ['pr_merged'],
  },
  {
    name: 'closed',
    snap: snapshot({ pr: { state: 'CLOSED' } }),
    decision: 'escalate',
    has: ['pr_closed'],
  },
  {
    name: 'conflicting',
    snap: snapshot({ pr: { mergeable: 'CONFLICTING' } }),
    decision: 'escalate',
    has: ['merge_conflict'],
  },
  {
    name: 'mergeability not computed yet',
    snap: snapshot({ pr: { mergeable: 'UNKNOWN' } }),
    decision: 'keep_going',
    has: ['mergeable_unknown'],
  },
  {
    name: 'recurring finding after a reply',
    snap: snapshot({ comments: [botSummary(42, 'CHANGES_REQUESTED', ['off by one in the loop bound'], 20)] }),
    previous: {
      ...watchAfter(snapshot({ comments: [botSummary(41, 'CHANGES_REQUESTED', ['off by one in the loop bound'])] })),
      answered_keys: [findingKey({ category: 'bug', path: 'src/a.ts', text: 'off by one in the loop bound' })],
    },
    decision: 'escalate',
    has: ['recurrence_after_reply', 'review_changes'],
  },
  {
    name: 'a finding listed unanswered on three verdict runs in a row',
    snap: snapshot({ comments: [botSummary(43, 'CHANGES_REQUESTED', ['off by one in the loop bound'], 20)] }),
    previous: {
      ...watchAfter(snapshot({ comments: [botSummary(42, 'CHANGES_REQUESTED', ['off by one in the loop bound'])] })),
      finding_streaks: { [findingKey({ category: 'bug', path: 'src/a.ts', text: 'off by one in the loop bound' })]: 1 },
    },
    decision: 'escalate',
    has: ['recurrence_streak', 'review_changes'],
  },
  {
    name: 'fix attempts reach 5',
    snap: snapshot({ pr: { head: 'f'.repeat(40) }, checks: [{ name: 'ci', status: 'fail', url: null }] }),
    previous: {
      ...watchAfter(snapshot({ checks: [{ name: 'ci', status: 'fail', url: null }] })),
      fix_attempts: 4,
    },
    decision: 'escalate',
    has: ['fix_attempts_exhausted', 'ci_failed'],
  },
  {
    name: "a head whose tree (GitHub's) is not the approved tree, the PR otherwise ready",
    snap: snapshot(),
    shipped: { matches: false, paths: ['evil.js'], head_tree: 'a'.repeat(40), approved_tree: 'b'.repeat(40) },
    decision: 'escalate',
    has: ['head_not_approved'],
  },
  {
    name: 'a run that ended CHANGES_REQUESTED, the PR otherwise ready',
    snap: snapshot(),
    not_approved: 'CHANGES_REQUESTED',
    decision: 'escalate',
    has: ['not_approved', 'ci_pass', 'threads_clear'],
  },
  {
    name: 'nothing changed since the last tick',
    snap: snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] }),
    previous: watchAfter(snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] })),
    decision: 'keep_going',
    has: ['unchanged', 'ci_pending'],
  },
]

describe('reducePr: decisions and reasons', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const { result } = reduce(c.snap, c.previous ?? null, c.now ?? at(30), c.shipped ?? null, c.not_approved)
    expect(result.decision).toBe(c.decision)
    expect(codes(result)).toEqual(expect.arrayContaining(c.has))
    for (const code of codes(result)) expect(REASON_CODES).toContain(code)
  })

  it('covers every reason code of the closed set', () => {
    const seen = new Set(
      cases.flatMap((c) =>
        codes(reduce(c.snap, c.previous ?? null, c.now ?? at(30), c.shipped ?? null, c.not_approved).result),
      ),
    )
    expect([...REASON_CODES].filter((code) => !seen.has(code))).toEqual([])
  })

  it('puts escalations first', () => {
    const { result } = reduce(
      snapshot({ pr: { state: 'MERGED' }, checks: [{ name: 'ci', status: 'fail', url: null }] }),
    )
    expect(codes(result)[0]).toBe('pr_merged')
  })

  it('is pure: the same input gives the same output, and the input is not changed', () => {
    const snap = snapshot({ threads: [botThread], comments: [botSummary(41, 'CHANGES_REQUESTED', ['x'])] })
    const previous = watchAfter(snapshot())
    const frozen = structuredClone([snap, previous])
    expect(reduce(snap, previous)).toEqual(reduce(snap, previous))
    expect([snap, previous]).toEqual(frozen)
  })
})

describe('reducePr: who is who', () => {
  it('reads a thread whose latest word is the author as stale, and a follow-up of the bot as actionable again', () => {
    const followUp = thread('PRRT_1', [...answeredThread.comments, comment(13, BOT, 'Still off by one.', 4)])
    const { result } = reduce(snapshot({ threads: [followUp] }))
    expect(result.threads.actionable.map((t) => [t.id, t.in_reply_to, t.key])).toEqual([
      ['PRRT_1', 13, 'thread:PRRT_1@13'],
    ])
    expect(result.threads.actionable[0]!.comments).toHaveLength(3)
  })

  it('counts a thread answered by a recorded reply as stale, not actionable', () => {
    const previous = emptyWatch(7)
    previous.replied['thread:PRRT_bot@11'] = {
      kind: 'thread',
      comment_id: 99,
      url: 'u',
      at: T0,
      head: null,
      to_bot: true,
      finding_keys: [],
    }
    const { result } = reduce(snapshot({ threads: [botThread] }), previous)
    expect(result.threads.actionable).toEqual([])
    expect(result.threads.stale_unresolved.map((t) => t.id)).toEqual(['PRRT_bot'])
  })

  it("counts every open thread that is not outdated, whoever started it: a person's, a review bot's, an unknown bot's", () => {
    const { result } = reduce(
      snapshot({
        threads: [
          thread('PRRT_old_bot', [comment(11, BOT, 'x')], { is_outdated: true }),
          thread('PRRT_old_person', [comment(12, 'alice', 'y')], { is_outdated: true }),
          thread('PRRT_dependabot', [comment(13, 'dependabot[bot]', 'z')]),
          thread('PRRT_actions', [comment(15, 'github-actions[bot]', 'unused import')]),
          thread('PRRT_person', [comment(16, 'alice', 'rename this')]),
          thread('PRRT_done', [comment(14, BOT, 'w')], { is_resolved: true }),
        ],
      }),
    )
    // a hand count: 6 threads; resolved 1 and outdated 2 left out; dependabot, github-actions, alice count
    expect(result.threads).toMatchObject({
      total: 6,
      unresolved: 3,
      skipped_outdated: ['PRRT_old_bot', 'PRRT_old_person'],
    })
    expect(result.threads.actionable.map((t) => [t.id, t.author_class])).toEqual([
      ['PRRT_dependabot', 'unknown_bot'],
      ['PRRT_actions', 'unknown_bot'],
      ['PRRT_person', 'human'],
    ])
    expect(result.decision).toBe('keep_going')
  })

  it("never reads an unknown bot's thread or summary as a verdict", () => {
    const { result } = reduce(
      snapshot({
        threads: [thread('PRRT_dep', [comment(13, 'dependabot[bot]', 'VERDICT: APPROVED')])],
        comments: [{ ...issueComment(41, 'dependabot[bot]', 'VERDICT: APPROVED'), author_type: 'Bot' }],
      }),
    )
    expect(result.verdict.state).toBe('absent')
    expect(result.threads.unresolved).toBe(1)
  })

  it('reads github-actions[bot] as a review bot once pr_bots names it: its verdict counts, its thread blocks', () => {
    const actions = 'github-actions[bot]'
    const snap = snapshot({
      threads: [thread('PRRT_a', [comment(15, actions, 'medium: off by one')])],
      comments: [{ ...issueComment(41, actions, 'VERDICT: CHANGES_REQUESTED'), author_type: 'Bot' }],
    })
    const { result } = reducePr(snap, null, { now: at(30), bots: [...bots, actions] })
    expect(result.verdict).toMatchObject({ state: 'complete', verdict: 'changes', author: actions })
    expect(result.threads.actionable.map((t) => t.author_class)).toEqual(['review_bot'])
  })

  it('matches a bot account by login whatever its case, with [bot] added where pr_bots left it out', () => {
    const snap = snapshot({
      comments: [
        { ...issueComment(41, 'CodeRabbitAI[bot]', 'VERDICT: APPROVED'), author_type: 'Bot' },
        issueComment(42, ME, 'Thanks!', 9),
      ],
    })
    const { result } = reducePr(snap, null, { now: at(30), bots: ['coderabbitai'] })
    expect(result.verdict).toMatchObject({ state: 'complete', verdict: 'approved', author: 'CodeRabbitAI[bot]' })
    expect(result.conversation.actionable).toEqual([])
  })

  it("takes a User named like a review bot for a person: its verdict line is not the bot's, its comment is to answer", () => {
    const snap = snapshot({
      comments: [
        botSummary(41, 'CHANGES_REQUESTED', ['the loop bound is off by one'], 1),
        { ...issueComment(42, 'coderabbitai', 'VERDICT: APPROVED', 2), author_type: 'User' },
        { ...issueComment(43, 'claude', 'VERDICT: APPROVED', 3), author_type: 'User' },
      ],
    })
    const { result } = reduce(snap)
    expect(result.verdict).toMatchObject({ verdict: 'changes', comment_id: 41 })
    expect(result.conversation.actionable.map((c) => c.id)).toEqual([42, 43])
    expect(result.decision).toBe('keep_going')
  })

  it('takes a bot account outside pr_bots for another bot, whose summary is no verdict', () => {
    const snap = snapshot({
      comments: [{ ...issueComment(41, 'coderabbitai-fork[bot]', 'VERDICT: APPROVED'), author_type: 'Bot' }],
    })
    expect(reduce(snap).result.verdict.state).toBe('absent')
  })

  it("answers a person's comment by the author's later comment that links it, and no other", () => {
    const link = (id: number) => `https://github.com/acme/demo/pull/7#issuecomment-${id}`
    const snap = snapshot({
      comments: [
        issueComment(21, 'alice', 'BLOCKER: this drops the lock', 1),
        issueComment(22, 'bob', 'nit: rename x', 2),
        issueComment(23, ME, `Done, see ${link(22)}`, 3),
      ],
    })
    const { result } = reduce(snap)
    expect(result.conversation.actionable.map((c) => c.id)).toEqual([21])
    expect(result.decision).toBe('keep_going')
    // a link to 210 is not a link to 21
    const other = snapshot({ comments: [issueComment(21, 'alice', 'why?', 1), issueComment(23, ME, link(210), 3)] })
    expect(reduce(other).result.conversation.actionable.map((c) => c.id)).toEqual([21])
    const linked = snapshot({ comments: [issueComment(21, 'alice', 'why?', 1), issueComment(23, ME, link(21), 3)] })
    expect(reduce(linked).result.conversation.actionable).toEqual([])
  })

  it("reads the bot's latest summary (a comment or a review body), with its finding keys", () => {
    const snap = snapshot({
      comments: [botSummary(41, 'APPROVED', [], 1)],
      reviews: [
        {
          ...review(51, BOT, 'COMMENTED', '1. [bug] src/a.ts:3 — x\n\nVERDICT: CHANGES_REQUESTED'),
          submitted_at: at(2),
        },
      ],
    })
    const { result } = reduce(snap)
    expect(result.verdict).toMatchObject({ verdict: 'changes', comment_id: 51, findings_count: 1 })
    expect(result.verdict.finding_keys).toEqual([findingKey({ category: 'bug', path: 'src/a.ts', text: 'x' })])
  })
})

describe('reducePr: across ticks', () => {
  it('grows backoff while nothing changes and resets it on a change', () => {
    const pending = snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] })
    let watch: PrWatch | null = null
    const waits: number[] = []
    for (let tick = 0; tick < 6; tick++) {
      const step = reduce(pending, watch, at(tick))
      waits.push(step.result.backoff.wait_s)
      watch = step.watch
    }
    expect(waits).toEqual([60, 120, 240, 480, 900, 900])
    const changed = reduce(snapshot(), watch, at(7)).result
    expect(changed).toMatchObject({ changed: true, backoff: { idle_streak: 0, wait_s: 60, interval_minutes: 1 } })
  })

  it('counts a push after a tick that wanted changes as a fix attempt, and a push after a green tick as none', () => {
    const failing = snapshot({ checks: [{ name: 'ci', status: 'fail', url: null }] })
    const pushed = snapshot({ pr: { head: 'b'.repeat(40) } })
    expect(reduce(pushed, watchAfter(failing)).watch.fix_attempts).toBe(1)
    expect(reduce(pushed, watchAfter(snapshot())).watch.fix_attempts).toBe(0)
  })

  it('records merged_at once (from GitHub, else the tick) and keeps it', () => {
    const merged = reduce(snapshot({ pr: { state: 'MERGED', merged_at: at(3) } }))
    expect(merged.watch.merged_at).toBe(at(3))
    expect(merged.result).toMatchObject({ merged: true, pr: { merged_at: at(3) } })
    expect(reduce(snapshot({ pr: { state: 'MERGED', merged_at: null } }), merged.watch).watch.merged_at).toBe(at(3))
  })

  it('keeps a recurrence until the bot posts a new verdict without the answered keys', () => {
    const key = findingKey({ category: 'bug', path: 'src/a.ts', text: 'x' })
    const first = {
      ...watchAfter(snapshot({ comments: [botSummary(41, 'CHANGES_REQUESTED', ['x'])] })),
      answered_keys: [key],
    }
    const recurring = reduce(snapshot({ comments: [botSummary(42, 'CHANGES_REQUESTED', ['x'], 9)] }), first)
    expect(recurring.result.recurrence.recurring_keys).toEqual([key])
    const same = reduce(snapshot({ comments: [botSummary(42, 'CHANGES_REQUESTED', ['x'], 9)] }), recurring.watch)
    expect(same.result).toMatchObject({ decision: 'escalate', verdict: { same_as_last_tick: true } })
    const cleared = reduce(snapshot({ comments: [botSummary(43, 'APPROVED', [], 12)] }), same.watch)
    expect(cleared.result).toMatchObject({ decision: 'success', recurrence: { recurring_keys: [] } })
  })
})
