// verify: is the PR head's tree, as GitHub reports it, the tree the reviewer approved? Without a PR, the branch's
// local head commit is compared instead. For CI: the check, or head_not_approved naming the paths that differ.
import type { Context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { resolveRun } from '../run/run-access.ts'
import { approvedTree } from '../run/run-queries.ts'
import { expectApprovedHead } from './approved-head.ts'

export interface VerifyOptions {
  run?: string
  cwd?: string
  /** The PR to check (default: the run's PR; none: the branch's local head). */
  pr?: number
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
  const pr = options.pr ?? run.pr
  const check = await expectApprovedHead(run, approved, pr, { home: ctx.home })
  return { run_id: run.run_id, pr, source: pr === null ? 'local' : 'github', ...check }
}
