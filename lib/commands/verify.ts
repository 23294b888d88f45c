// verify: is the PR head's tree, as GitHub reports it, the tree the reviewer approved? Without a PR, the branch's
// local head commit is compared instead. For CI: the check, or head_not_approved naming the paths that differ.
import type { Context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { resolveRun } from '../run/run-access.ts'
import { approvedTree, lastReview } from '../run/run-queries.ts'
import { type ReviewerShown, reviewerName, reviewerShown, reviewerSource } from '../run/reviewer-identity.ts'
import { expectApprovedHead } from './approved-head.ts'
import { VENDORS } from '../run/vendors.ts'

export interface VerifyOptions {
  run?: string
  cwd?: string
  /** The PR to check (default: the run's PR; none: the branch's local head). */
  pr?: number
  /** Refuse an approval by a stub or a custom command (default on: `--no-require-vendor` relaxes it). */
  requireVendor?: boolean
}

export async function run(ctx: Context, options: VerifyOptions) {
  const run = resolveRun(options, { allowFinished: true })
  const approved = approvedTree(run)
  if (!approved)
    fail(
      'wrong_phase',
      `run ${run.run_id} has no approved tree: no review approved it (or it was approved before snapshots)`,
      { run_id: run.run_id, phase: run.phase, next: run.phase === 'finished' ? null : 'review' },
    )
  const reviewer = reviewerShown(lastReview(run)!)
  if (options.requireVendor !== false && reviewer.kind !== 'vendor') notByVendor(run.run_id, reviewer)
  const pr = options.pr ?? run.pr
  const check = await expectApprovedHead(run, approved, pr, { home: ctx.home })
  return {
    run_id: run.run_id,
    pr,
    source: pr === null ? 'local' : 'github',
    reviewer,
    reviewer_source: reviewerSource(run),
    ...check,
  }
}

/**
 * A stub or a command approved it: not an approval `verify` vouches for unless asked to (head_not_approved: the head
 * was not approved by a reviewer, which is what CI gates on; nothing differs, so no paths).
 */
function notByVendor(runId: string, reviewer: ReviewerShown): never {
  const what = reviewer.kind === 'builtin' ? 'a stub shipped with pair-loop' : 'a custom command'
  fail(
    'head_not_approved',
    `run ${runId} was approved by ${reviewerName(reviewer)}, ${what}, not by a vendor's reviewer (${VENDORS.join(', ')}); pass --no-require-vendor to accept it`,
    { run_id: runId, reviewer, required: 'vendor', paths: [] },
  )
}
