// The optional final round (`review --pr`, with `pair_loop.pr_final_round: true`): one more review, of the pushed PR's
// diff against its base (`gh pr diff`), recorded on the run beside the loop's rounds; `pr-reply --review-findings`
// then posts it as one PR review. Detached like any review: the foreground claims it and waits a bounded time
// (lib/review/foreground.ts), the worker fetches the diff, conducts the review and records it (`conductFinalRound`).
import { checkBudgetBrake } from '../cost/brake.ts'
import { fail } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { ghTarget, runGh } from '../ground/gh.ts'
import { prDiffPath } from '../ground/paths.ts'
import type { AttemptJob } from '../review/attempt-files.ts'
import { cutAtLine } from '../ground/capped.ts'
import { claimFinalRound } from '../review/claim.ts'
import { isHeldElsewhere, ownClaim } from '../review/claim-holder.ts'
import { conductReview } from '../review/conduct.ts'
import type { WorkingDiff } from '../review/diff.ts'
import { finalReviewDocument } from '../review/documents.ts'
import { runAttempt } from '../review/foreground.ts'
import { failureOf, reviewInputOf } from '../review/recording.ts'
import { chooseReviewer } from '../review/reviewers.ts'
import { callSettings, type ReviewSessionOptions } from '../review/session.ts'
import { stoppedAs, type TaskResult, type WorkerCall } from '../review/worker.ts'
import { changeRun, configOf } from '../run/run-access.ts'
import { approvedTree, nextFields, numberFindings } from '../run/run-queries.ts'
import type { ReviewerRound, RunState } from '../run/state.ts'
import { recordFailedReview } from '../run/transitions.ts'
import { diffStatText, withoutExcluded } from './diff-lines.ts'
import { EXCLUDED_BY_CONFIG } from '../snapshot/named-only.ts'
import { expectPr, recordFinalReview } from './moves.ts'
import { context } from '../ground/context.ts'

/** The side claim key final rounds used before they were detached (dropped with the record, should one be left). */
const OLD_CLAIM_KEY = 'final-review'

export function finalRound(run: RunState, options: ReviewSessionOptions) {
  return runAttempt(run, 'pr', options, async (current, attempt, launch) => {
    const { config } = options
    if (!config.pair_loop.pr_final_round)
      fail('usage', 'the final round on the PR is off; set "pr_final_round": true under "pair_loop" in the config', {
        flag: '--pr',
        key: 'pair_loop.pr_final_round',
      })
    expectPr(current, 'review --pr')
    if (current.final_review)
      fail('wrong_phase', `run ${current.run_id} already had its final round (${current.final_review.review.at})`, {
        run_id: current.run_id,
        ...nextFields(current), // pr-check, or the loop's step when that round asked for changes
      })
    chooseReviewer(current, config, options.reviewerCmd) // a missing reviewer is said now, not by the worker
    const worker = await launch()
    const { covered } = await checkBudgetBrake(current, config, {
      overBudget: options.overBudget,
      command: 'review --pr',
    })
    const timeoutS = options.timeoutS ?? config.pair_loop.reviewer_timeout_s
    const state = await changeRun(current.run_id, (latest) =>
      claimFinalRound(latest, {
        claim: ownClaim(timeoutS, attempt, 'pr', worker),
        heldElsewhere: isHeldElsewhere(latest.review_claim),
      }),
    )
    const job = {
      reviewer_cmd: options.reviewerCmd,
      timeout_s: options.timeoutS ?? null,
      over_budget: covered,
      budget_left_usd: null,
      reviewers: null,
    }
    return { state, job }
  })
}

/** The worker's task for the final round: the PR's diff, the review of it, recorded (or the failed attempt kept). */
export async function conductFinalRound(run: RunState, job: AttemptJob, call: WorkerCall): Promise<TaskResult> {
  const config = configOf(run)
  const pr = expectPr(run, 'review --pr')
  const choice = call.watch.watched(chooseReviewer(run, config, job.reviewer_cmd))
  const diff = await prDiff(run, pr, config.pair_loop.max_diff_bytes, config.pair_loop.review_exclude ?? [])
  const conducted = await conductReview(run, {
    ...callSettings(run, choice, { config, timeoutS: job.timeout_s, log: call.log }),
    signalRelay: call.watch.control,
    onSpawn: call.onSpawn,
    // the reviewer's copy is the approved tree (what the PR head must be) when the working tree is it, else empty
    diffSource: { diff, title: `the pushed PR #${pr} against its base`, tree: approvedTree(run) },
  })
  await call.noted()
  if (!conducted.ok) {
    const stopped = stoppedAs(call.watch.stopped(), choice.tool)
    const message = stopped?.message ?? conducted.message
    const failure = failureOf(choice.tool, stopped?.kept ?? conducted.code, message, conducted.calls)
    await changeRun(run.run_id, (state) => recordFailedReview(state, { failure, pid: context().pid }))
    const code = stopped?.code ?? conducted.code
    return { error: { code, message, details: { run_id: run.run_id, pr, tool: choice.tool, next: 'review' } } }
  }
  const input = reviewInputOf(choice, conducted, job.over_budget)
  const recorded: ReviewerRound = { ...input, findings: numberFindings(run, run.rounds.length + 1, input.findings) }
  const state = await changeRun(run.run_id, (current) => {
    const step = recordFinalReview(current, {
      review: recorded,
      diff_path: prDiffPath(run.run_id),
      claimKey: OLD_CLAIM_KEY,
      pid: context().pid,
      now: recorded.at,
    })
    if (step.state?.review_claim?.pid === context().pid) step.state.review_claim = null
    return step
  })
  return { document: finalReviewDocument(state) }
}

/**
 * The PR's diff as GitHub shows it (`gh pr diff`), kept beside the run whole, and cut at the diff cap like any review's
 * once the files `exclude` matches are taken out (named in the stat as excluded by config, as in a loop round).
 */
async function prDiff(run: RunState, pr: number, maxBytes: number, exclude: readonly string[]): Promise<WorkingDiff> {
  const whole = await runGh(['pr', 'diff', String(pr), '--color', 'never'], { at: ghTarget(run), idempotent: true })
  writeFileAtomic(prDiffPath(run.run_id), whole, 0o644)
  const { diff: text, excluded } = withoutExcluded(whole, exclude)
  const bytes = Buffer.byteLength(text)
  const truncated = bytes > maxBytes
  const diff = truncated ? cutAtLine(Buffer.from(text), maxBytes) : text
  const named = excluded.map((path) => ` ${path} | ${EXCLUDED_BY_CONFIG}: NOT REVIEWED`)
  const stat = [
    diffStatText(text),
    ...(named.length ? [`Named only (${named.length}), not shown below:`, ...named] : []),
  ]
  const unreviewed = excluded.map((path) => ({ path, why: EXCLUDED_BY_CONFIG, oid: null, size: null }))
  return { stat: stat.join('\n'), diff, bytes, truncated, tree: null, unreviewed }
}
