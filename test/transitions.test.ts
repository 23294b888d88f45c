import { describe, expect, it } from 'vitest'
import type { ErrorCode } from '../lib/ground/errors.ts'
import { PairLoopError } from '../lib/ground/errors.ts'
import type { ParsedFinding } from '../lib/run/grammar.ts'
import type { Phase, ReviewClaim, RunState } from '../lib/run/state.ts'
import type { Step } from '../lib/run/store.ts'
import { claimReview, noteReviewerGroup, releaseClaim } from '../lib/review/claim.ts'
import {
  applyReview,
  attachPr,
  closeRun,
  newRun,
  openRound,
  type OpenRoundInput,
  recordFailedReview,
  recordReply,
  type ReviewInput,
} from '../lib/run/transitions.ts'

// The phase moves as pure functions: a state built by code, an input, the state and result they yield. No process.

const T0 = '2026-11-30T05:00:00.000Z'
const T1 = '2026-11-30T05:10:00.000Z'
const ME = 4242

const fresh = (over: Partial<RunState> = {}): RunState => ({
  ...newRun({
    run_id: '20261130-050000-abcdef',
    task: 'Fix the bound',
    repo: '/repo',
    branch: 'feat',
    base_sha: 'a'.repeat(40),
    base_branch: null,
    coder: 'claude',
    reviewer: 'codex',
    max_rounds: 2,
    budget_usd: null,
    config: null,
    now: T0,
  }),
  ...over,
})

const roundInput = (over: Partial<OpenRoundInput> = {}): OpenRoundInput => ({
  summary: 'did it',
  session_id: 'coder-session',
  diff: { files: 1, insertions: 2, deletions: 0 },
  findings_addressed: null,
  over_cap: false,
  override: null,
  now: T1,
  ...over,
})

const claim = (pid = ME): ReviewClaim => ({
  pid,
  host: 'h',
  started_at: T1,
  pid_start: null,
  expires_at: null,
  reviewer_pgid: null,
  reviewer_start: null,
})

const parsed = (text: string, over: Partial<ParsedFinding> = {}): ParsedFinding => ({
  n: 1,
  category: 'bug',
  severity: 'major',
  path: 'a.ts',
  line_start: 3,
  line_end: 3,
  text,
  ...over,
})

const review = (verdict: ReviewInput['verdict'], findings: ParsedFinding[] = []): ReviewInput => ({
  tool: 'codex',
  fallback_used: false,
  verdict,
  findings,
  summary: '',
  session_id: 'reviewer-thread',
  model: 'gpt-5',
  usage: null,
  cost: null,
  calls: 1,
  duration_ms: 10,
  raw_output_path: null,
  over_budget: false,
  at: T1,
})

/** The written state of a move that must write one. */
const written = <T>(step: Step<T>): RunState => {
  expect(step.state, 'the move writes a state').toBeDefined()
  return step.state!
}

/** A run in `reviewing`, round `n` opened, claimed by this review. */
function reviewing(rounds = 1, over: Partial<RunState> = {}): RunState {
  let state = fresh(over)
  for (let n = 1; n <= rounds; n++) {
    state = written(openRound(state, roundInput({ over_cap: true })))
    state = written(claimReview(state, { claim: claim(), heldElsewhere: false, override: null }))
    if (n < rounds) state = written(applyReview(state, { review: review('CHANGES_REQUESTED'), pid: ME }))
  }
  return state
}

function codeOf(move: () => unknown): ErrorCode | null {
  try {
    move()
    return null
  } catch (error) {
    if (error instanceof PairLoopError) return error.code
    throw error
  }
}

describe('newRun', () => {
  it('begins in coding with nothing recorded and revision 1', () => {
    const run = fresh()
    expect(run).toMatchObject({ phase: 'coding', revision: 1, rounds: [], replies: {}, outcome: null, pr: null })
    expect(run.created_at).toBe(T0)
  })
})

describe('openRound', () => {
  it('records the coder round from the previous review (or the start) to now and moves to reviewing', () => {
    const run = written(openRound(fresh(), roundInput()))
    expect(run.phase).toBe('reviewing')
    expect(run.rounds).toEqual([
      {
        n: 1,
        reviewer: null,
        coder: {
          summary: 'did it',
          session_id: 'coder-session',
          diff: { files: 1, insertions: 2, deletions: 0 },
          findings_addressed: null,
          over_cap: false,
          over_budget: false,
          started_at: T0,
          done_at: T1,
        },
      },
    ])
  })

  /** A run that used its one round without approval. */
  const capped = () =>
    written(applyReview(reviewing(1, { max_rounds: 1 }), { review: review('CHANGES_REQUESTED'), pid: ME }))

  it.each<[string, () => RunState, boolean, ErrorCode | null]>([
    ['coding', () => fresh(), false, null],
    ['reviewing', () => reviewing(), false, 'wrong_phase'],
    ['finished', () => fresh({ phase: 'finished' }), false, 'wrong_phase'],
    ['capped, without --over-cap', capped, false, 'round_cap'],
    ['capped, with --over-cap', capped, true, null],
  ])('from %s: %s', (_name, state, overCap, code) => {
    expect(codeOf(() => openRound(state(), roundInput({ over_cap: overCap })))).toBe(code)
  })

  it('marks a round past max_rounds, opened with --over-cap, as over the cap', () => {
    expect(capped().phase).toBe('capped')
    const run = written(openRound(capped(), roundInput({ over_cap: true })))
    expect(run.rounds.map((round) => round.coder.over_cap)).toEqual([false, true])
    expect(run.rounds[1]!.coder.started_at).toBe(T1) // from the review before it
  })

  it('records an over-budget override on the run with the round it opened', () => {
    const override = { at: T1, command: 'coder-done', round: 99, spent_usd: 2, limit_usd: 1 }
    const run = written(openRound(fresh(), roundInput({ override })))
    expect(run.budget_overrides).toEqual([{ ...override, round: 1 }])
    expect(run.rounds[0]!.coder.over_budget).toBe(true)
  })

  it('never changes the state it was given', () => {
    const before = fresh()
    const copy = structuredClone(before)
    openRound(before, roundInput())
    expect(before).toEqual(copy)
  })
})

describe('claimReview', () => {
  const opened = () => written(openRound(fresh(), roundInput()))

  it.each<[string, ReviewClaim | null, boolean, ErrorCode | null]>([
    ['no claim', null, false, null],
    ['a dead claim', claim(1), false, null],
    ['a live claim of another review', claim(1), true, 'review_in_progress'],
    ['its own claim', claim(ME), true, null],
  ])('with %s on the run: %s', (_name, held, heldElsewhere, code) => {
    const run = { ...opened(), review_claim: held }
    expect(codeOf(() => claimReview(run, { claim: claim(), heldElsewhere, override: null }))).toBe(code)
  })

  it('needs phase reviewing', () => {
    expect(codeOf(() => claimReview(fresh(), { claim: claim(), heldElsewhere: false, override: null }))).toBe(
      'wrong_phase',
    )
  })

  it('learns the reviewer group only while the claim is its own', () => {
    const run = written(claimReview(opened(), { claim: claim(), heldElsewhere: false, override: null }))
    expect(written(noteReviewerGroup(run, { pid: ME, pgid: 77, start: 's' })).review_claim).toMatchObject({
      reviewer_pgid: 77,
      reviewer_start: 's',
    })
    expect(noteReviewerGroup(run, { pid: 1, pgid: 77, start: 's' }).state).toBeUndefined()
  })
})

describe('applyReview', () => {
  it.each<[string, ReviewInput['verdict'], number, Phase]>([
    ['an approval', 'APPROVED', 1, 'approved'],
    ['changes requested with rounds left', 'CHANGES_REQUESTED', 1, 'coding'],
    ['changes requested in the last round', 'CHANGES_REQUESTED', 2, 'capped'],
  ])('moves %s to the right phase', (_name, verdict, rounds, phase) => {
    const run = written(applyReview(reviewing(rounds), { review: review(verdict), pid: ME }))
    expect(run.phase).toBe(phase)
    expect(run.review_claim).toBeNull()
  })

  it('numbers findings R.N with keys, and marks one answered earlier and raised again as recurring', () => {
    let run = written(
      applyReview(reviewing(), { review: review('CHANGES_REQUESTED', [parsed('off by one')]), pid: ME }),
    )
    expect(run.rounds[0]!.reviewer!.findings.map((f) => [f.id, f.recurring])).toEqual([['1.1', false]])
    run = written(recordReply(run, { finding: '1.1', disposition: 'wont-fix', body: 'no', post_pr: false, now: T1 }))
    run = written(openRound(run, roundInput()))
    run = written(claimReview(run, { claim: claim(), heldElsewhere: false, override: null }))
    const moved = parsed('off by one', { line_start: 9, line_end: 9 })
    run = written(applyReview(run, { review: review('CHANGES_REQUESTED', [moved]), pid: ME }))
    expect(run.rounds[1]!.reviewer!.findings[0]).toMatchObject({ id: '2.1', recurring: true, recurring_of: '1.1' })
  })

  // Caught the mutant that drops the "was it answered" condition of numberFindings (run/run-queries.ts).
  it('does not mark a finding recurring when round 1 raised it and nobody answered it', () => {
    let run = written(
      applyReview(reviewing(), { review: review('CHANGES_REQUESTED', [parsed('off by one')]), pid: ME }),
    )
    run = written(openRound(run, roundInput()))
    run = written(claimReview(run, { claim: claim(), heldElsewhere: false, override: null }))
    run = written(applyReview(run, { review: review('CHANGES_REQUESTED', [parsed('off by one')]), pid: ME }))
    expect(run.rounds[1]!.reviewer!.findings[0]).toMatchObject({ id: '2.1', recurring: false, recurring_of: null })
  })

  it('refuses a review whose claim was taken over, and one out of phase', () => {
    expect(codeOf(() => applyReview(reviewing(), { review: review('APPROVED'), pid: 1 }))).toBe('review_in_progress')
    expect(codeOf(() => applyReview(fresh(), { review: review('APPROVED'), pid: ME }))).toBe('wrong_phase')
  })

  it('remembers a fallback reviewer on the run', () => {
    const run = written(applyReview(reviewing(), { review: { ...review('APPROVED'), fallback_used: true }, pid: ME }))
    expect(run.reviewer_fallback).toBe(true)
  })
})

describe('a failed review', () => {
  const failure = {
    at: T1,
    tool: 'codex' as const,
    code: 'reviewer_failed',
    message: 'x',
    cost: null,
    raw_output_path: null,
    session_id: null,
  }

  it('is kept on the run, leaves the phase in reviewing and releases its own claim', () => {
    const run = written(recordFailedReview(reviewing(), { failure, pid: ME }))
    expect(run.phase).toBe('reviewing')
    expect(run.failed_reviews).toEqual([{ ...failure, round: 1 }])
    expect(run.review_claim).toBeNull()
  })

  it("never releases another review's claim", () => {
    expect(written(recordFailedReview(reviewing(), { failure, pid: 1 })).review_claim?.pid).toBe(ME)
    expect(releaseClaim(reviewing(), { pid: 1 }).state).toBeUndefined()
    expect(written(releaseClaim(reviewing(), { pid: ME })).review_claim).toBeNull()
  })
})

describe('recordReply', () => {
  const withFinding = () =>
    written(applyReview(reviewing(), { review: review('CHANGES_REQUESTED', [parsed('off by one')]), pid: ME }))
  const input = { finding: '1.1', disposition: 'fixed' as const, body: 'done', post_pr: false, now: T1 }

  it('records one answer per finding, with the finding key', () => {
    const step = recordReply(withFinding(), input)
    expect(step.result).toMatchObject({ finding: '1.1', disposition: 'fixed', body: 'done', comment_url: null })
    expect(written(step).replies['1.1']!.key).toBe(withFinding().rounds[0]!.reviewer!.findings[0]!.key)
  })

  it.each<[string, () => RunState, Partial<typeof input>, ErrorCode]>([
    ['a second answer', () => written(recordReply(withFinding(), input)), {}, 'duplicate_reply'],
    ['an unknown finding', withFinding, { finding: '1.9' }, 'finding_not_found'],
    ['a finished run', () => ({ ...withFinding(), phase: 'finished' }), {}, 'wrong_phase'],
    ['--post-pr without a PR', withFinding, { post_pr: true }, 'usage'],
  ])('refuses %s', (_name, state, over, code) => {
    expect(codeOf(() => recordReply(state(), { ...input, ...over }))).toBe(code)
  })

  it('hands back an answer recorded but not yet posted, for --post-pr to post, without writing', () => {
    const answered = { ...written(recordReply(withFinding(), input)), pr: 7 }
    const step = recordReply(answered, { ...input, post_pr: true })
    expect(step.state).toBeUndefined()
    expect(step.result.body).toBe('done')
  })
})

describe('closeRun and attachPr', () => {
  const approved = () => written(applyReview(reviewing(), { review: review('APPROVED'), pid: ME }))

  it.each<[string, () => RunState, 'APPROVED' | 'CHANGES_REQUESTED' | 'ABANDONED', ErrorCode | null]>([
    ['APPROVED after an approving review', approved, 'APPROVED', null],
    ['APPROVED without one', () => fresh(), 'APPROVED', 'wrong_phase'],
    ['ABANDONED at any time', () => fresh(), 'ABANDONED', null],
    [
      'another verdict on a finished run',
      () => written(closeRun(approved(), { verdict: 'APPROVED', pr: null, now: T1 })),
      'ABANDONED',
      'wrong_phase',
    ],
  ])('closes %s: %s', (_name, state, verdict, code) => {
    expect(codeOf(() => closeRun(state(), { verdict, pr: null, now: T1 }))).toBe(code)
  })

  it('finishes with the outcome and clears a claim; a replay writes nothing', () => {
    const closed = written(
      closeRun({ ...approved(), review_claim: claim() }, { verdict: 'APPROVED', pr: null, now: T1 }),
    )
    expect(closed).toMatchObject({
      phase: 'finished',
      outcome: { verdict: 'APPROVED', finished_at: T1 },
      review_claim: null,
    })
    expect(closeRun(closed, { verdict: 'APPROVED', pr: null, now: T1 }).state).toBeUndefined()
  })

  it('adds a PR number to a finished run, and attachPr records number and URL together', () => {
    const closed = written(closeRun(approved(), { verdict: 'APPROVED', pr: null, now: T1 }))
    expect(written(closeRun(closed, { verdict: 'APPROVED', pr: 7, now: T1 })).pr).toBe(7)
    expect(written(attachPr(closed, { number: 42, url: 'https://x/pull/42' }))).toMatchObject({
      pr: 42,
      pr_url: 'https://x/pull/42',
    })
  })
})
