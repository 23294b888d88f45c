#!/usr/bin/env node
// verify: is the PR head's tree, as GitHub reports it, the tree the reviewer approved? Exit 0, or head_not_approved
// naming the paths that differ; for CI. Without a PR, the branch's local head commit is compared instead.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { pairLoopHome } from '../lib/paths.ts'
import { resolveRun } from '../lib/run-access.ts'
import { approvedTree } from '../lib/run-queries.ts'
import { checkLocalHead } from '../lib/snapshot/local-head.ts'
import { checkShipped, headNotApproved } from '../lib/snapshot/ship.ts'

const verify = defineScript({
  name: 'verify',
  description: "Check that the PR head's tree (as GitHub reports it) is the tree the reviewer approved.",
  args: {
    ...runArgs,
    pr: {
      type: 'string',
      description: "the PR to check (default: the run's PR; none: the branch's local head)",
      valueHint: 'N',
    },
  },
  async run(args) {
    const run = resolveRun(args, { allowFinished: true })
    const approved = approvedTree(run)
    if (!approved)
      fail(
        'wrong_phase',
        `run ${run.run_id} has no approved tree: no review approved it (or it was approved before snapshots)`,
        {
          run_id: run.run_id,
          phase: run.phase,
          next: run.phase === 'finished' ? null : 'review',
        },
      )
    const pr = integerFlag(args.pr, 'pr', { min: 1 }) ?? run.pr
    const check =
      pr === null
        ? await checkLocalHead(run, approved)
        : await checkShipped(run.repo, pr, { tree: approved, base: run.base_sha }, pairLoopHome())
    if (!check.matches) {
      if (pr === null) headNotApproved(check, null, { source: 'local' })
      headNotApproved(check, pr, { source: 'github', base: run.base_sha })
    }
    return { run_id: run.run_id, pr, source: pr === null ? 'local' : 'github', ...check }
  },
})

export default verify
if (isMain(import.meta)) void main(verify)
