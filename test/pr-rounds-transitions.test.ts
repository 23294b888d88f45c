// Fixes after the PR are rounds, and a stalemate stops the loop (issue 36), as pure moves and queries over a state
// built by code: no process, no disk.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import type { PairLoopError } from '../lib/ground/errors.ts'
import type { ParsedFinding } from '../lib/run/grammar.ts'
import type { Config } from '../lib/run/config.ts'
import { RunState } from '../lib/run/state.ts'
import type { Step } from '../lib/run/store.ts'
import { claimReview } from '../lib/review/claim.ts'
import { approvedTree, askOf, movedSinceApproval, nextStep, stalemate } from '../lib/run/run-queries.ts'
import { applyReview, closeRun, newRun, openRound, type ReviewInput } from '../lib/run/transitions.ts'
import { reducePr } from '../lib/pr/reduce.ts'
import { pendingWork } from '../lib/review/stop-hook.ts'
import { snapshot } from './_pr.ts'

const T0 = '2026-11-30T05:00:00.000Z'
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString()
const ME = 4242
const TREE = (n: number) => String(n).repeat(40).slice(0, 40)

const written = <T>(step: Step<T>): RunState => {
  expect(step.state, 'the move writes a state').toBeDefined()
  return step.state!
}

const finding = (text: string, path = 'a.ts'): ParsedFinding => ({
  n: 1,
  category: 'bug',
  severity: 'major',
  path,
  line_start: 3,
  line_end: 3,
  text,
})

const review = (verdict: ReviewInput['verdict'], tree: string, minute: number, over: Partial<ReviewInput> = {}) =>
  ({
    tool: 'codex',
    fallback_used: false,
    verdict,
    findings: verdict === 'APPROVED' ? [] : [finding('the bound is off by one')],
    summary: '',
    session_id: 'reviewer-thread',
    model: 'gpt-5',
    usage: null,
    cost: null,
    calls: 1,
    duration_ms: 10,
    raw_output_path: null,
    over_budget: false,
    at: at(minute),
    tree,
    ...over,
  }) satisfies ReviewInput

/** One round: handed over (tree `tree`), claimed, reviewed. */
function round(state: RunState, tree: string, verdict: ReviewInput['verdict'], minute: number, over = {}): RunState {
  const opened = written(
    openRound(state, {
      summary: 'did it',
      session_id: null,
      diff: { files: 1, insertions: 1, deletions: 0 },
      tree,
      findings_addressed: null,
      over_cap: false,
      override: null,
      changed_since_review: true,
      now: at(minute),
    }),
  )
  const claim = { pid: ME, host: 'h', started_at: at(minute), pid_start: null, expires_at: null }
  const claimed = written(
    claimReview(opened, {
      claim: { ...claim, reviewer_pgid: null, reviewer_start: null },
      heldElsewhere: false,
      override: null,
    }),
  )
  return written(applyReview(claimed, { review: review(verdict, tree, minute, over), pid: ME }))
}

const fresh = (config: Partial<Config['pair_loop']> | null = null): RunState =>
  newRun({
    run_id: '20261130-050000-abcdef',
    task: 'Fix the bound',
    repo: '/repo',
    branch: 'feat',
    base_sha: 'a'.repeat(40),
    base_branch: null,
    coder: 'claude',
    reviewer: 'codex',
    max_rounds: 1,
    budget_usd: null,
    config: config && ({ pair_loop: config } as Config),
    now: T0,
  })

/** Approved in round 1, finished, PR #7 recorded: the PR phase. */
function withOpenPr(config: Partial<Config['pair_loop']> | null = null): RunState {
  const approved = round(fresh(config), TREE(1), 'APPROVED', 1)
  return written(closeRun(approved, { verdict: 'APPROVED', pr: 7, now: at(2) }))
}

describe('a round after the PR', () => {
  it('reopens the finished run into reviewing, marked as the PR phase, and counts apart from max_rounds', () => {
    const run = withOpenPr()
    expect(run.max_rounds).toBe(1) // used up: a PR-phase round is not capped by it
    expect(movedSinceApproval(run, TREE(2))).toBe(true)
    expect(movedSinceApproval(run, TREE(1))).toBe(false)
    const opened = written(
      openRound(run, {
        summary: 'fix CI',
        session_id: null,
        diff: null,
        tree: TREE(2),
        findings_addressed: null,
        over_cap: false,
        override: null,
        changed_since_review: true,
        now: at(3),
      }),
    )
    expect(opened.phase).toBe('reviewing')
    expect(opened.rounds[1]).toMatchObject({ n: 2, pr_phase: true, coder: { over_cap: false } })
    expect(opened.outcome?.verdict).toBe('APPROVED') // kept while the round runs
  })

  it('on APPROVED moves the approved tree on, keeps every one in order, and says push', () => {
    const run = round(withOpenPr(), TREE(2), 'APPROVED', 4)
    expect(run.phase).toBe('finished')
    expect(run.approved_trees).toEqual([
      { tree: TREE(1), round: 1, reviewer: 'codex', at: at(1) },
      { tree: TREE(2), round: 2, reviewer: 'codex', at: at(4) },
    ])
    expect(approvedTree(run)).toBe(TREE(2))
    expect(nextStep(run)).toBe('push')
    // a pr-check after the approval: its decision speaks again
    const pending = snapshot({ checks: [{ name: 'ci', status: 'pending', url: null }] })
    const ticked = { ...run, pr_watch: reducePr(pending, null, { now: at(5), bots: [] }).watch }
    expect(nextStep(ticked)).toBe('pr-check')
  })

  it('on CHANGES_REQUESTED goes back to coding, and keeps the newest approved tree what ships', () => {
    const run = round(withOpenPr(), TREE(2), 'CHANGES_REQUESTED', 4)
    expect(run.phase).toBe('coding')
    expect(approvedTree(run)).toBe(TREE(1))
    expect(nextStep(run)).toBe('reply')
  })

  it('caps at pr_max_rounds: the next round is round_cap with the ask, --over-cap goes on', () => {
    let run = withOpenPr({ pr_max_rounds: 2 })
    run = round(run, TREE(2), 'CHANGES_REQUESTED', 4)
    run = round(run, TREE(3), 'CHANGES_REQUESTED', 5)
    expect(run.phase).toBe('capped')
    expect(askOf(run)?.choices.map((choice) => choice.command)).toContain('pair-loop pr-stop --reason "taken over"')
    const input = {
      summary: 'again',
      session_id: null,
      diff: null,
      tree: TREE(4),
      findings_addressed: null,
      over_cap: false,
      override: null,
      now: at(6),
    }
    try {
      openRound(run, input)
      expect.unreachable('round_cap')
    } catch (error) {
      expect((error as PairLoopError).code).toBe('round_cap')
      expect((error as PairLoopError).details).toMatchObject({ pr_max_rounds: 2, pr_rounds: 2, next: 'ask-user' })
    }
    expect(written(openRound(run, { ...input, over_cap: true })).rounds[3]).toMatchObject({ pr_phase: true })
  })

  it('reads a state file from before approved_trees as it did: the approving review is the approved tree', () => {
    const run = withOpenPr()
    const { approved_trees: _dropped, ...old } = run
    const parsed = v.parse(RunState, JSON.parse(JSON.stringify(old)))
    expect(parsed.approved_trees).toBeUndefined()
    expect(approvedTree(parsed)).toBe(TREE(1))
    expect(approvedTree(round(parsed, TREE(2), 'APPROVED', 4))).toBe(TREE(2))
    expect(round(parsed, TREE(2), 'APPROVED', 4).approved_trees?.map((entry) => entry.tree)).toEqual([TREE(1), TREE(2)])
  })
})

describe('the Stop hook in the PR phase', () => {
  const diff = { files: 1, insertions: 1, deletions: 0 }
  it('sends the agent back to coder-done when the tree is not the newest approved one, else lets it stop', () => {
    const run = withOpenPr()
    expect(pendingWork(run, { diff, tree: TREE(2) })).toMatch(/newest approved tree.*pair-loop coder-done/)
    expect(pendingWork(run, { diff, tree: TREE(1) })).toBeNull()
  })
})

describe('fix attempts', () => {
  it('counts the rounds after the PR, so the fifth escalates with fix_attempts_exhausted', () => {
    const reduce = (prRounds: number) => reducePr(snapshot(), null, { now: at(1), bots: [], pr_rounds: prRounds })
    expect(reduce(4).result.decision).not.toBe('escalate')
    const fifth = reduce(5).result
    expect(fifth.decision).toBe('escalate')
    expect(fifth.reasons.map((reason) => reason.code)).toContain('fix_attempts_exhausted')
    expect(fifth.recurrence.fix_attempts).toBe(5)
  })
})

describe('a stalemate', () => {
  const unchanged = { unchanged_keys: [] as string[] }
  /** Two reviews raising the same finding; the second says whether its file changed since the first. */
  function twice(changed: boolean, config: Partial<Config['pair_loop']> | null = null) {
    const first = round({ ...fresh(config), max_rounds: 5 }, TREE(1), 'CHANGES_REQUESTED', 1)
    const key = first.rounds[0]!.reviewer!.findings[0]!.key
    return round(first, TREE(2), 'CHANGES_REQUESTED', 2, changed ? unchanged : { unchanged_keys: [key] })
  }

  it('asks the person when the same findings come back on files nobody changed, with three choices', () => {
    const run = twice(false)
    expect(stalemate(run)).toMatchObject({ rounds: 2 })
    expect(nextStep(run)).toBe('ask-user')
    expect(askOf(run)).toMatchObject({
      reason: 'stalemate',
      choices: [
        { say: 'one more round' },
        { command: 'pair-loop finish --verdict CHANGES_REQUESTED' },
        { command: 'pair-loop finish --verdict ABANDONED' },
      ],
    })
  })

  it('is no stalemate when the files the findings name changed', () => {
    const run = twice(true)
    expect(stalemate(run)).toBeNull()
    expect(nextStep(run)).toBe('reply')
  })

  it('waits for stalemate_rounds reviews in a row', () => {
    expect(stalemate(twice(false, { stalemate_rounds: 3 }))).toBeNull()
  })
})
