// The pr-babysit seed's two captured results (references/helper.md, "Examples", Falconiere/toolu#165) replayed as
// snapshots (fixtures/pr-seed/) through the real pr-check: each of the seed's fields comes out as the seed printed it,
// under pair-loop's spelling (snake_case; the seed's `ci_reviewer` class is a review bot named in `pr_bots`).
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './_helpers.ts'
import { expectOk } from './_expect.ts'
import { prSandbox, world } from './_pr.ts'

// the seed's results, copied from helper.md (comment bodies there trimmed; the fixtures carry whole ones)
const SEED_SUCCESS = {
  decision: 'success',
  reasons: ['ci_pass', 'threads_clear', 'review_approved'],
  pr: {
    number: 165,
    url: 'https://github.com/Falconiere/toolu/pull/165',
    head: 'a29e6c97379674323292578f9f0cfbffa00e375a',
    branch: 'feat/python-quality',
    base: 'main',
    author: 'Falconiere',
    state: 'OPEN',
    mergeable: 'MERGEABLE',
    reviewDecision: 'REVIEW_REQUIRED',
  },
  ci: { status: 'pass', firstCheck: { name: 'shellcheck', status: 'pass' } },
  verdict: {
    state: 'complete',
    verdict: 'approved',
    findingsCount: 0,
    findingKeys: [],
    mustFix: [],
    commentUrl: 'https://github.com/Falconiere/toolu/pull/165#issuecomment-5483377990',
    commentId: 5483377990,
    degraded: false,
    degradedReason: null,
    sameRunAsLastTick: false,
  },
  threads: { total: 6, unresolved: 0, actionable: 0, staleUnresolved: 0 },
  recurrence: { streak: 0, fixAttempts: 0 },
  backoff: { idleStreak: 0 },
}

const SEED_KEEP_GOING = {
  decision: 'keep_going',
  reasons: ['ci_pass', 'threads_unresolved', 'review_in_progress'],
  verdict: { state: 'in_progress', verdict: 'none', findingsCount: 0, sameRunAsLastTick: false },
  threads: { total: 6, unresolved: 1 },
  actionable: {
    id: 'PRRT_kwDOSzUwAc6d2S5O',
    path: 'plugins/rust-quality/hooks/concerns/20-tests.sh',
    line: 26,
    isOutdated: false,
    rootCommentId: 3897681281,
    inReplyTo: 3897751832,
    authorClass: 'ci_reviewer',
    lastCommentAuthor: 'github-actions',
    lastCommentAt: '2026-08-31T19:39:25Z',
    injectionSuspect: false,
    injectionPattern: null,
    comments: [3897681281, 3897748564, 3897751832],
  },
}

/** The seed's CI reviewer (`github-actions[bot]`, as Toolu Code Review posts) named a review bot, as its set does. */
const CONFIG = { pair_loop: { pr_bots: ['github-actions[bot]'] } }
const fixture = (name: string) => join(ROOT, 'fixtures', 'pr-seed', `${name}.json`)

async function replay(name: string) {
  const sb = await prSandbox(world({ pr: { ...world().pr, number: 165 } }), CONFIG, 165)
  return expectOk(await sb.cli(['pr-check', '--snapshot-in', fixture(name), '--now', '2026-08-31T20:30:00Z']))
}

describe("the seed's captured examples, replayed", () => {
  it('success: open PR, green CI, an approved verdict, no open thread', async () => {
    const doc = await replay('success')
    const seed = SEED_SUCCESS
    expect(doc.decision).toBe(seed.decision)
    expect(doc.reasons.map((r: { code: string }) => r.code)).toEqual(seed.reasons)
    const { reviewDecision, ...pr } = seed.pr
    expect(doc.pr).toMatchObject({ ...pr, review_decision: reviewDecision })
    expect(doc.ci.status).toBe(seed.ci.status)
    expect(doc.ci.checks[0]).toMatchObject(seed.ci.firstCheck)
    expect(doc.verdict).toMatchObject({
      state: seed.verdict.state,
      verdict: seed.verdict.verdict,
      findings_count: seed.verdict.findingsCount,
      finding_keys: seed.verdict.findingKeys,
      must_fix: seed.verdict.mustFix,
      comment_url: seed.verdict.commentUrl,
      comment_id: seed.verdict.commentId,
      degraded: seed.verdict.degraded,
      degraded_reason: seed.verdict.degradedReason,
      same_as_last_tick: seed.verdict.sameRunAsLastTick,
    })
    expect(doc.threads).toMatchObject({ total: seed.threads.total, unresolved: seed.threads.unresolved })
    expect(doc.threads.actionable).toHaveLength(seed.threads.actionable)
    expect(doc.threads.stale_unresolved).toHaveLength(seed.threads.staleUnresolved)
    expect(doc.conversation.actionable).toEqual([])
    expect(doc.reviews.actionable).toEqual([])
    expect(doc.recurrence).toMatchObject({ streak: seed.recurrence.streak, fix_attempts: seed.recurrence.fixAttempts })
    expect(doc.backoff.idle_streak).toBe(seed.backoff.idleStreak)
  })

  it("keep_going: the review still running, one CI reviewer's thread still flagging after the author's answer", async () => {
    const doc = await replay('keep_going')
    const seed = SEED_KEEP_GOING
    expect(doc.decision).toBe(seed.decision)
    expect(doc.reasons.map((r: { code: string }) => r.code)).toEqual(seed.reasons)
    expect(doc.verdict).toMatchObject({
      state: seed.verdict.state,
      verdict: seed.verdict.verdict,
      findings_count: seed.verdict.findingsCount,
      same_as_last_tick: seed.verdict.sameRunAsLastTick,
    })
    expect(doc.threads).toMatchObject(seed.threads)
    const a = seed.actionable
    expect(doc.threads.actionable).toHaveLength(1)
    expect(doc.threads.actionable[0]).toMatchObject({
      id: a.id,
      path: a.path,
      line: a.line,
      is_outdated: a.isOutdated,
      root_comment_id: a.rootCommentId,
      in_reply_to: a.inReplyTo,
      author_class: a.authorClass === 'ci_reviewer' ? 'review_bot' : a.authorClass,
      last_comment_author: a.lastCommentAuthor,
      last_comment_at: a.lastCommentAt,
      injection_suspect: a.injectionSuspect,
      injection_pattern: a.injectionPattern,
    })
    expect(doc.threads.actionable[0].comments.map((c: { database_id: number }) => c.database_id)).toEqual(a.comments)
  })

  it('keep_going under the default config too: the thread of a bot outside pr_bots still blocks success', async () => {
    const sb = await prSandbox(world({ pr: { ...world().pr, number: 165 } }), undefined, 165)
    const doc = expectOk(
      await sb.cli(['pr-check', '--snapshot-in', fixture('keep_going'), '--now', '2026-08-31T20:30:00Z']),
    )
    expect(doc.decision).toBe('keep_going')
    expect(doc.threads.unresolved).toBe(1)
    expect(doc.threads.actionable.map((t: { author_class: string }) => t.author_class)).toEqual(['unknown_bot'])
  })
})
