import { mkdirSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { configPath } from '../lib/ground/paths.ts'
import { REPO_CONFIG_NAME } from '../lib/run/config.ts'
import { expectError, expectOk, reviewWith, runInReview } from './_expect.ts'
import { recordReview, sandbox } from './_helpers.ts'
import { claimReview } from '../lib/review/claim.ts'
import type { ParsedFinding } from '../lib/run/grammar.ts'
import { nextFields } from '../lib/run/run-queries.ts'
import type { RunState } from '../lib/run/state.ts'
import type { Step } from '../lib/run/store.ts'
import {
  applyReview,
  newRun,
  openRound,
  recordFailedReview,
  recordReply,
  type ReviewInput,
} from '../lib/run/transitions.ts'

// The stops are in `next`: `ask-user` with an `ask` saying why and the command for each answer. Pure, then one CLI run.

const T0 = '2026-11-30T05:00:00.000Z'
const T1 = '2026-11-30T05:10:00.000Z'
const T2 = '2026-11-30T05:20:00.000Z'
const ME = 4242

const written = <T>(step: Step<T>): RunState => step.state!

const fresh = (): RunState =>
  newRun({
    run_id: '20261130-050000-abcdef',
    task: 'Fix the bound',
    repo: '/repo',
    branch: 'feat',
    base_sha: 'a'.repeat(40),
    base_branch: null,
    coder: 'claude',
    reviewer: 'codex',
    max_rounds: 3,
    budget_usd: null,
    config: null,
    now: T0,
  })

const finding: ParsedFinding = {
  n: 1,
  category: 'bug',
  severity: 'major',
  path: 'a.ts',
  line_start: 3,
  line_end: 3,
  text: 'off by one',
}

const review = (findings: ParsedFinding[]): ReviewInput => ({
  tool: 'codex',
  fallback_used: false,
  verdict: 'CHANGES_REQUESTED',
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

/** The run handed over and claimed by this process: phase `reviewing`. */
function handOver(run: RunState, now = T1): RunState {
  const opened = written(
    openRound(run, {
      summary: 'did it',
      session_id: 'coder-session',
      diff: { files: 1, insertions: 2, deletions: 0 },
      tree: null,
      findings_addressed: null,
      over_cap: false,
      override: null,
      now,
    }),
  )
  return written(
    claimReview(opened, {
      claim: {
        pid: ME,
        host: 'h',
        started_at: now,
        pid_start: null,
        expires_at: null,
        reviewer_pgid: null,
        reviewer_start: null,
      },
      heldElsewhere: false,
      override: null,
    }),
  )
}

/** Round 1 raised the finding, answered with `disposition`; round 2 raised it again. */
function raisedAgainAfter(disposition: 'wont-fix' | 'fixed'): RunState {
  let run = written(applyReview(handOver(fresh()), { review: review([finding]), pid: ME }))
  run = written(recordReply(run, { finding: '1.1', disposition, body: 'no', post_pr: false, now: T1 }))
  return written(applyReview(handOver(run, T2), { review: review([finding]), pid: ME }))
}

const failure = (code: string) => ({
  failure: { at: T2, tool: 'codex' as const, code, message: 'x', cost: null, raw_output_path: null, session_id: null },
  pid: ME,
})

describe('next and ask', () => {
  it("asks the person when a finding answered won't-fix comes back, offering each answer for it", () => {
    const fields = nextFields(raisedAgainAfter('wont-fix'))
    expect(fields.next).toBe('ask-user')
    expect(fields.ask?.reason).toBe('wont_fix_recurring')
    expect(fields.ask?.choices.map((choice) => choice.command)).toContain(
      'pair-loop reply --finding 2.1 --disposition wont-fix --body-file -',
    )
  })

  it('sends the coder to reply when a finding answered fixed comes back', () => {
    expect(nextFields(raisedAgainAfter('fixed'))).toEqual({ next: 'reply' })
  })

  it('goes on once the returning finding has its answer', () => {
    const run = written(
      recordReply(raisedAgainAfter('wont-fix'), {
        finding: '2.1',
        disposition: 'fixed',
        body: 'the person says fix it',
        post_pr: false,
        now: T2,
      }),
    )
    expect(nextFields(run).next).toBe('coder-done')
  })

  it('asks the person after two reviewer failures in a row', () => {
    const once = written(recordFailedReview(handOver(fresh()), failure('reviewer_failed')))
    expect(nextFields(once)).toEqual({ next: 'review' })
    const twice = written(recordFailedReview(once, failure('reviewer_timeout')))
    expect(nextFields(twice).next).toBe('ask-user')
    expect(nextFields(twice).ask?.reason).toBe('reviewer_failed_twice')
    expect(nextFields(twice).ask?.choices[0]?.command).toBe('pair-loop review')
  })

  it('does not count a cancelled review as a reviewer failure', () => {
    const once = written(recordFailedReview(handOver(fresh()), failure('reviewer_failed')))
    expect(nextFields(written(recordFailedReview(once, failure('cancelled'))))).toEqual({ next: 'review' })
  })

  it('asks the person at the round cap, with another round, shipping and abandoning as the answers', () => {
    let run = fresh()
    for (let n = 0; n < 3; n++) run = written(applyReview(handOver(run), { review: review([]), pid: ME }))
    expect(run.phase).toBe('capped')
    expect(nextFields(run).ask?.choices.map((choice) => choice.command)).toEqual([
      'pair-loop coder-done --over-cap --summary-file -',
      'pair-loop finish --verdict CHANGES_REQUESTED',
      'pair-loop finish --verdict ABANDONED',
    ])
  })
})

describe("status of a run whose won't-fix finding came back", () => {
  it('names the person, not reply, as the next step, with the ask', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    const answer = ['reply', '--finding', '1.1', '--disposition', 'wont-fix', '--body-file', '-']
    expectOk(await sb.cli(answer, { input: 'not in scope\n' }))
    expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
    await recordReview(sb.home, runId, reviewWith(1))
    const status = expectOk(await sb.cli(['status']))
    expect(status).toMatchObject({ next: 'ask-user', ask: { reason: 'wont_fix_recurring' } })
  })
})

describe('the stops that come as an error', () => {
  it('asks the person when no reviewer CLI is installed: install one, name a command of their own, or abandon', async () => {
    const sb = sandbox()
    mkdirSync(sb.home, { recursive: true })
    const missing = { codex_bin: 'codex-not-installed-here', claude_bin: 'claude-not-installed-here' }
    writeFileSync(configPath(sb.home), JSON.stringify({ pair_loop: missing }))
    await runInReview(sb)
    const error = expectError(await sb.cli(['review']), 'reviewer_unavailable')
    expect(error.next).toBe('ask-user')
    expect(error.ask.reason).toBe('reviewer_unavailable')
    expect(error.ask.choices.map((c: { command: string }) => c.command)).toEqual([
      'pair-loop review',
      'pair-loop review --reviewer-cmd \'["PROGRAM"]\'',
      'pair-loop finish --verdict ABANDONED',
    ])
  })

  it('asks the person to trust a repository config that names a reviewer command, with the command that does', async () => {
    const config = { pair_loop: { reviewer_cmd: ['sh', 'review.sh'] } }
    const sb = sandbox({ [REPO_CONFIG_NAME]: JSON.stringify(config) })
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
    expect(error.next).toBe('ask-user')
    expect(error.ask.reason).toBe('config_untrusted')
    expect(error.ask.choices[0].command).toBe(`pair-loop trust --cwd ${sb.repo}`)
  })
})
