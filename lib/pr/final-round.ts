// The optional final round (`review --pr`, with `pair_loop.pr_final_round: true`): one more review, of the pushed PR's
// diff against its base (`gh pr diff`), recorded on the run beside the loop's rounds; `pr-reply --review-findings`
// then posts it as one PR review. Claimed like any gh side effect, so two of them never run at once.
import { isClaimLive, ownSideClaim, releaseSideClaim, takeClaim } from '../claims.ts'
import { checkBudgetBrake } from '../cost/brake.ts'
import { fail, PairLoopError } from '../errors.ts'
import { writeFileAtomic } from '../fsutil.ts'
import { runGh } from '../gh.ts'
import { prDiffPath } from '../paths.ts'
import { conductReview } from '../review/conduct.ts'
import { failureOf, reviewInputOf } from '../review/recording.ts'
import { callSettings, relaySignal, type ReviewSessionOptions } from '../review/session.ts'
import { cutAtLine } from '../review/capped.ts'
import type { WorkingDiff } from '../review/diff.ts'
import { chooseReviewer } from '../review/reviewers.ts'
import { changeRun } from '../run-access.ts'
import { numberFindings } from '../run-queries.ts'
import type { ReviewerRound, RunState } from '../state.ts'
import { recordFailedReview } from '../transitions.ts'
import { diffStatText } from './diff-lines.ts'
import { expectPr, recordFinalReview } from './moves.ts'

const CLAIM_KEY = 'final-review'

export async function finalRound(run: RunState, options: ReviewSessionOptions) {
  const { config } = options
  if (!config.pair_loop.pr_final_round)
    fail('usage', 'the final round on the PR is off; set "pr_final_round": true under "pair_loop" in the config', {
      flag: '--pr',
      key: 'pair_loop.pr_final_round',
    })
  const pr = expectPr(run, 'review --pr')
  if (run.final_review)
    fail('wrong_phase', `run ${run.run_id} already had its final round (${run.final_review.review.at})`, {
      run_id: run.run_id,
      next: 'pr-check',
    })
  const choice = chooseReviewer(run, config, options.reviewerCmd)
  const { override } = await checkBudgetBrake(run, config, { overBudget: options.overBudget, command: 'review --pr' })
  await changeRun(run.run_id, (state) => {
    const step = takeClaim(state, {
      key: CLAIM_KEY,
      claim: ownSideClaim(),
      heldLive: isClaimLive(state.claims?.[CLAIM_KEY]),
    })
    if (!step.result.taken)
      fail('review_in_progress', `another final round of run ${run.run_id} is running (pid ${step.result.held.pid})`, {
        run_id: run.run_id,
      })
    return step
  })
  const { relay, dispose } = relaySignal(options.signal)
  try {
    const diff = await prDiff(run, pr, config.pair_loop.max_diff_bytes)
    const conducted = await conductReview(run, {
      ...callSettings(run, choice, options),
      signalRelay: relay,
      diffSource: { diff, title: `the pushed PR #${pr} against its base` },
    })
    if (!conducted.ok) {
      const code = relay.interrupted ? 'interrupted' : conducted.code
      const failure = failureOf(choice.tool, code, conducted.message, conducted.calls)
      await changeRun(run.run_id, (state) => recordFailedReview(state, { failure, pid: process.pid }))
      throw new PairLoopError(code, conducted.message, { run_id: run.run_id, pr, tool: choice.tool, next: 'review' })
    }
    const input = reviewInputOf(choice, conducted, override !== null)
    const recorded: ReviewerRound = { ...input, findings: numberFindings(run, run.rounds.length + 1, input.findings) }
    const state = await changeRun(run.run_id, (current) =>
      recordFinalReview(current, {
        review: recorded,
        diff_path: prDiffPath(run.run_id),
        claimKey: CLAIM_KEY,
        pid: process.pid,
      }),
    )
    const final = state.final_review!.review
    return {
      run_id: run.run_id,
      round: 'pr',
      pr,
      verdict: final.verdict,
      findings: final.findings,
      reviewer: {
        tool: final.tool,
        fallback_used: final.fallback_used,
        model: final.model,
        cost_usd: final.cost?.usd ?? null,
      },
      next: final.findings.length > 0 ? 'pr-reply' : 'pr-check',
    }
  } finally {
    dispose()
    await changeRun(run.run_id, (state) => releaseSideClaim(state, { key: CLAIM_KEY, pid: process.pid })).catch(
      () => {},
    )
  }
}

/** The PR's diff as GitHub shows it (`gh pr diff`), kept beside the run and cut at the diff cap like any review's. */
async function prDiff(run: RunState, pr: number, maxBytes: number): Promise<WorkingDiff> {
  const text = await runGh(['pr', 'diff', String(pr), '--color', 'never'], { cwd: run.repo, idempotent: true })
  writeFileAtomic(prDiffPath(run.run_id), text, 0o644)
  const bytes = Buffer.byteLength(text)
  const truncated = bytes > maxBytes
  const diff = truncated ? cutAtLine(Buffer.from(text), maxBytes) : text
  return { stat: diffStatText(text), diff, bytes, truncated, tree: null, unreviewed: [] }
}
