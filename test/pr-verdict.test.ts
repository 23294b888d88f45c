// The review bots' verdicts read by each bot's own format, from the samples in fixtures/pr-bots/: never by keywords,
// anything else `unknown`; success needs an approval with zero findings, or a verdict that cannot be read (degraded).
import { describe, expect, it } from 'vitest'
import { DEFAULT_PR_BOTS } from '../lib/run/config.ts'
import { reducePr } from '../lib/pr/reduce.ts'
import { readBotVerdict } from '../lib/pr/verdict.ts'
import { at, botSample, issueComment, ME, review, snapshot } from './_pr.ts'

const bots = [...DEFAULT_PR_BOTS]
const people = { author: ME, bots }
const CODERABBIT = 'coderabbitai[bot]'
const COPILOT = 'copilot-pull-request-reviewer[bot]'
const CLAUDE = 'claude[bot]'

const asComment = (author: string, sample: string) =>
  snapshot({ comments: [issueComment(41, author, botSample(sample))] })
const asReview = (author: string, sample: string, state: 'COMMENTED' | 'CHANGES_REQUESTED' = 'COMMENTED') =>
  snapshot({ reviews: [review(51, author, state, botSample(sample))] })

const table = [
  {
    sample: 'coderabbit-review-changes',
    snap: asReview(CODERABBIT, 'coderabbit-review-changes'),
    state: 'complete',
    verdict: 'changes',
    count: 2,
    format: 'coderabbit',
  },
  {
    sample: 'coderabbit-review-clean',
    snap: asReview(CODERABBIT, 'coderabbit-review-clean'),
    state: 'complete',
    verdict: 'approved',
    count: 0,
    format: 'coderabbit',
  },
  {
    sample: 'coderabbit-in-progress',
    snap: asComment(CODERABBIT, 'coderabbit-in-progress'),
    state: 'in_progress',
    verdict: 'none',
    count: 0,
    format: 'coderabbit',
  },
  {
    sample: 'coderabbit-rate-limited',
    snap: asComment(CODERABBIT, 'coderabbit-rate-limited'),
    state: 'provider_error',
    verdict: 'none',
    count: 0,
    format: 'coderabbit',
  },
  {
    sample: 'copilot-review-comments',
    snap: asReview(COPILOT, 'copilot-review-comments'),
    state: 'complete',
    verdict: 'changes',
    count: 2,
    format: 'copilot',
  },
  {
    sample: 'copilot-review-clean',
    snap: asReview(COPILOT, 'copilot-review-clean'),
    state: 'complete',
    verdict: 'approved',
    count: 0,
    format: 'copilot',
  },
  {
    sample: 'claude-working',
    snap: asComment(CLAUDE, 'claude-working'),
    state: 'in_progress',
    verdict: 'none',
    count: 0,
    format: 'claude_code_action',
  },
  {
    sample: 'claude-error',
    snap: asComment(CLAUDE, 'claude-error'),
    state: 'provider_error',
    verdict: 'none',
    count: 0,
    format: 'claude_code_action',
  },
  {
    sample: 'claude-finished-verdict',
    snap: asComment(CLAUDE, 'claude-finished-verdict'),
    state: 'complete',
    verdict: 'changes',
    count: 2,
    format: 'verdict_line',
  },
  {
    sample: 'claude-finished-prose',
    snap: asComment(CLAUDE, 'claude-finished-prose'),
    state: 'unknown',
    verdict: 'none',
    count: 0,
    format: 'claude_code_action',
  },
] as const

describe('bot verdicts by format', () => {
  for (const row of table)
    it(`reads ${row.sample} as ${row.state}${row.verdict === 'none' ? '' : ` (${row.verdict}, ${row.count} finding(s))`}`, () => {
      expect(readBotVerdict(row.snap, people)).toMatchObject({
        state: row.state,
        verdict: row.verdict,
        findings_count: row.count,
        format: row.format,
      })
    })

  it("reads a summary in another bot's format as unknown, not by its words", () => {
    const snap = snapshot({ comments: [issueComment(41, 'gemini-code-assist[bot]', botSample('claude-error'))] })
    expect(readBotVerdict(snap, people)).toMatchObject({
      state: 'unknown',
      degraded: true,
      degraded_reason: 'review_unknown_format',
    })
  })

  it('reads words like failed, error, pending or in progress in free prose as unknown', () => {
    const body = 'The build failed with an error earlier; a review is pending and in progress. Rate limited once.'
    expect(readBotVerdict(snapshot({ comments: [issueComment(41, CODERABBIT, body)] }), people).state).toBe('unknown')
  })

  it("skips CodeRabbit's walkthrough, so the review before it stands", () => {
    const snap = snapshot({
      reviews: [review(51, CODERABBIT, 'COMMENTED', botSample('coderabbit-review-changes'))],
      comments: [issueComment(41, CODERABBIT, botSample('coderabbit-walkthrough'), 9)],
    })
    expect(readBotVerdict(snap, people)).toMatchObject({ state: 'complete', verdict: 'changes', comment_id: 51 })
  })

  it('carries the must-fix lines of a VERDICT summary (blocker and major findings), not its nits', () => {
    const verdict = readBotVerdict(asComment(CLAUDE, 'claude-finished-verdict'), people)
    expect(verdict.must_fix).toEqual(['src/a.ts:3 — the loop bound is off by one'])
  })
})

describe('bot verdicts in the decision', () => {
  it('gives a bot that asks for changes in its summary with no inline thread something to do: the reply to the summary', () => {
    const { result } = reducePr(asReview(CODERABBIT, 'coderabbit-review-changes'), null, { now: at(30), bots })
    expect(result.decision).toBe('keep_going')
    expect(result.threads.actionable).toEqual([])
    expect(result.verdict.answer_with).toBe('pr-reply --review 51 --body-file -')
  })

  it('marks success without a readable verdict as degraded, with manual_verify', () => {
    const { result } = reducePr(asComment(CLAUDE, 'claude-finished-prose'), null, { now: at(30), bots })
    expect(result).toMatchObject({
      decision: 'success',
      verdict: { degraded: true, degraded_reason: 'review_unknown_format' },
    })
    expect(result.reasons.map((r) => r.code)).toContain('manual_verify')
  })

  it('marks success on an approval with zero findings as not degraded', () => {
    const { result } = reducePr(asReview(COPILOT, 'copilot-review-clean'), null, { now: at(30), bots })
    expect(result).toMatchObject({ decision: 'success', verdict: { degraded: false, degraded_reason: null } })
    expect(result.reasons.map((r) => r.code)).not.toContain('manual_verify')
  })
})
