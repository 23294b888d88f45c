#!/usr/bin/env node
// finish: close the run, write the PR body; later calls may only add the PR (--pr N or --create-pr, once). Never merges.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { rememberHighWater } from '../lib/cost/high-water.ts'
import { cachedCostSummary } from '../lib/cost/status-snapshot.ts'
import { fail, isPairLoopError, PairLoopError } from '../lib/errors.ts'
import { writeFileAtomic } from '../lib/fsutil.ts'
import { createPr } from '../lib/gh.ts'
import { claimPrCreation, isClaimLive, ownSideClaim, PR_CREATE_KEY, releaseSideClaim } from '../lib/claims.ts'
import { changeRun, checkBranch, configOf, nowIso, resolveRun } from '../lib/run-access.ts'
import { pairLoopHome, prBodyPath } from '../lib/paths.ts'
import { renderPrBody } from '../lib/pr-body.ts'
import { OUTCOMES, type RunState } from '../lib/state.ts'
import { attachPr, checkVerdict, closeRun } from '../lib/transitions.ts'
import { treeNow } from '../lib/snapshot/now.ts'
import { approvedTree, movedSinceApproval } from '../lib/run-queries.ts'
import { checkLocalHead } from '../lib/snapshot/local-head.ts'
import { checkShipped, headNotApproved } from '../lib/snapshot/ship.ts'

const finish = defineScript({
  name: 'finish',
  description: 'Close the run with a verdict and write the PR body (transcript included). Never merges.',
  args: {
    ...runArgs,
    verdict: {
      type: 'enum',
      options: [...OUTCOMES],
      required: true,
      description: 'APPROVED only after an approving review',
    },
    pr: { type: 'string', description: 'record the number of the PR opened for this run', valueHint: 'N' },
    'create-pr': {
      type: 'boolean',
      description: 'open the PR with gh (title: the task; body: the PR body), once per run',
    },
    draft: { type: 'boolean', description: 'with --create-pr: open it as a draft' },
    'replace-pr': { type: 'boolean', description: 'with --pr N: replace the PR already recorded on the run' },
  },
  async run(args) {
    const pr = integerFlag(args.pr, 'pr', { min: 1 }) ?? null
    const createPrWanted = args['create-pr'] ?? false
    if (pr !== null && createPrWanted) fail('usage', 'give --pr N or --create-pr, not both', { flag: '--create-pr' })
    const replacePr = args['replace-pr'] ?? false
    if (replacePr && pr === null) fail('usage', '--replace-pr only goes with --pr N', { flag: '--replace-pr' })
    if (args.draft && !createPrWanted) fail('usage', '--draft only goes with --create-pr', { flag: '--draft' })
    const run = resolveRun(args, { allowFinished: true })
    // APPROVED ships what the approving review saw, byte for byte: not a tree that moved on since
    const changedSinceReview =
      args.verdict === 'APPROVED' && run.phase === 'approved' && movedSinceApproval(run, await treeNow(run))
    checkVerdict(run, args.verdict, changedSinceReview)
    if (createPrWanted && run.pr === null) await checkBranch(run, 'finish --create-pr')
    // what ships is what was approved: the branch's head before a PR opens, GitHub's head of a PR named
    const approved = args.verdict === 'APPROVED' ? approvedTree(run) : null
    if (approved && createPrWanted && run.pr === null) {
      const local = await checkLocalHead(run, approved)
      if (!local.matches)
        headNotApproved(local, null, {
          source: 'local',
          next: 'commit exactly the approved change, then finish --create-pr again',
        })
    }
    if (approved && pr !== null) {
      const shipped = await checkShipped(run.repo, pr, { tree: approved, base: run.base_sha }, pairLoopHome())
      if (!shipped.matches) headNotApproved(shipped, pr, { source: 'github', base: run.base_sha })
    }
    const cost = await cachedCostSummary(run, () => configOf(run))
    await rememberHighWater(run.run_id, cost.seen) // what was seen stays counted once the transcripts go
    const writeBody = (state: RunState) => writeFileAtomic(prBodyPath(state.run_id), renderPrBody(state, cost), 0o644)

    const closed = await changeRun(run.run_id, (state) => {
      const step = closeRun(state, {
        verdict: args.verdict,
        pr,
        replace_pr: replacePr,
        changed_since_review: changedSinceReview,
        now: nowIso(),
      })
      if (step.state) writeBody(step.state)
      return step
    })
    const { pruneHomeDaily } = await import('../lib/cost/prune.ts') // caches do not grow for good
    pruneHomeDaily()
    if (!createPrWanted || closed.pr !== null) return document(closed) // --create-pr on a run with a PR reports that PR

    // keyed and claimed under the lock, opened outside it, recorded under it: two calls never open two PRs
    const claimed = await claimCreation(run.run_id)
    if ('pr' in claimed) return document(claimed.pr)
    let created: Awaited<ReturnType<typeof createPr>>
    try {
      created = await createPr(closed.repo, {
        title: closed.task.split('\n')[0]!.slice(0, 250),
        bodyFile: prBodyPath(closed.run_id),
        base: closed.base_branch ?? null,
        head: closed.branch === 'HEAD' ? null : closed.branch,
        draft: args.draft ?? false,
      })
    } catch (error) {
      // gh failing leaves the run finished without a PR: the same command can be run again
      await changeRun(run.run_id, (state) => releaseSideClaim(state, { key: PR_CREATE_KEY, pid: process.pid })).catch(
        () => {},
      )
      throw prNotOpened(error, closed, { draft: args.draft ?? false })
    }
    const withPr = await changeRun(run.run_id, (state) => {
      const step = attachPr(state, created)
      writeBody(step.state!)
      return step
    })
    if (approved) {
      // recorded either way (the PR exists), but never reported as approved unless GitHub's head is the approved tree
      const shipped = await checkShipped(
        run.repo,
        created.number,
        { tree: approved, base: run.base_sha },
        pairLoopHome(),
      )
      if (!shipped.matches)
        headNotApproved(shipped, created.number, { source: 'github', pr_url: created.url, base: run.base_sha })
    }
    return document(withPr)

    function document(state: RunState) {
      return {
        run_id: state.run_id,
        verdict: state.outcome!.verdict,
        rounds: state.rounds.length,
        cost_usd: cost.total_usd,
        pr_body_path: prBodyPath(state.run_id),
        pr: state.pr,
        pr_url: state.pr_url,
      }
    }
  },
})

/**
 * gh failed to open the PR: the run is finished all the same and its PR body written, so the way on is the same
 * command once gh is fixed. Said first, since a person reading "gh failed" would think nothing happened.
 */
function prNotOpened(error: unknown, run: RunState, { draft }: { draft: boolean }): unknown {
  if (!isPairLoopError(error)) return error
  const again = `pair-loop finish --verdict ${run.outcome!.verdict} --create-pr${draft ? ' --draft' : ''}`
  const bodyPath = prBodyPath(run.run_id)
  return new PairLoopError(
    error.code,
    `the PR was not opened: ${error.message}. Run ${run.run_id} is finished (${run.outcome!.verdict}) and its PR body is written (${bodyPath}); run the same command again to open the PR: \`${again}\``,
    { ...error.details, run_id: run.run_id, finished: true, pr_body_path: bodyPath, next: 'finish', command: again },
  )
}

/** The claim on opening the run's PR; while another call holds it, wait (bounded) for the PR it opens. */
async function claimCreation(runId: string): Promise<{ pr: RunState } | { claimed: true }> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const step = await changeRun(runId, (state) =>
      claimPrCreation(state, { claim: ownSideClaim(), heldLive: isClaimLive(state.claims?.[PR_CREATE_KEY]) }),
    )
    if (!('held' in step)) return step
    if (Date.now() > deadline)
      fail(
        'locked',
        `another finish --create-pr of run ${runId} is still opening the PR (pid ${step.held.pid}); run the same command again`,
        {
          run_id: runId,
          in_flight: step.held,
        },
      )
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

export default finish
if (isMain(import.meta)) void main(finish)
