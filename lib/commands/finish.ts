// finish: close the run with its verdict and write the PR body; a later call may only add the PR (a number given, or
// opened with gh once). APPROVED ships only the tree the approving review saw. Never merges.
import { callHoldingClaim, claimUnderLock } from '../run/claimed-call.ts'
import { claimPrCreation, PR_CREATE_KEY } from '../run/claims.ts'
import { type Context, context } from '../ground/context.ts'
import { rememberHighWater } from '../cost/high-water.ts'
import { cachedCostSummary } from '../cost/status-snapshot.ts'
import type { RunCostSummary } from '../cost/summary.ts'
import { fail, isPairLoopError, PairLoopError } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { createPr, ghTarget } from '../ground/gh.ts'
import { namedOnlyPath, prBodyPath } from '../ground/paths.ts'
import { renderPrBody } from '../pr/body.ts'
import { type NamedOnly, readNamedOnly } from '../snapshot/named-only.ts'
import { changeRun, checkBranch, configOf, resolveRun } from '../run/run-access.ts'
import { approvedTree, movedSinceApproval } from '../run/run-queries.ts'
import { treeNow } from '../snapshot/now.ts'
import type { Outcome, RunState } from '../run/state.ts'
import { attachPr, checkVerdict, closeRun } from '../run/transitions.ts'
import { expectApprovedHead } from './approved-head.ts'
import { workingDiff } from '../review/diff.ts'

/** How long a second `finish --create-pr` waits for the PR another call is opening. */
const CREATION_WAIT_MS = 30_000

export interface FinishOptions {
  run?: string
  cwd?: string
  verdict: Outcome
  /** The number of a PR opened for the run (not with `createPr`). */
  pr: number | null
  /** Open the PR with gh (once per run). */
  createPr: boolean
  draft: boolean
  /** With `pr`: replace the PR already recorded. */
  replacePr: boolean
}

export async function run(ctx: Context, options: FinishOptions) {
  const { verdict, pr } = options
  const run = resolveRun(options, { allowFinished: true })
  // APPROVED ships what the approving review saw, byte for byte: not a tree that moved on since
  const changedSinceReview =
    verdict === 'APPROVED' && run.phase === 'approved' && movedSinceApproval(run, await treeNow(run, ctx.home))
  checkVerdict(run, verdict, changedSinceReview)
  const opensPr = options.createPr && run.pr === null
  if (opensPr) await checkBranch(run, 'finish --create-pr')
  // what ships is what was approved: the branch's head before a PR opens, GitHub's head of a PR named
  const approved = verdict === 'APPROVED' ? approvedTree(run) : null
  if (approved && opensPr)
    await expectApprovedHead(run, approved, null, {
      home: ctx.home,
      details: { next: 'commit exactly the approved change, then finish --create-pr again' },
    })
  // GitHub out of reach keeps the number (pr_unverified); the next pr-check compares the head before anything else
  const unverified =
    approved && pr !== null ? await unreachable(() => expectApprovedHead(run, approved, pr, { home: ctx.home })) : false
  const cost = await cachedCostSummary(run, () => configOf(run), ctx.env)
  await rememberHighWater(run, cost.seen) // what was seen stays counted once the transcripts go
  // the approved change's binaries and the like, named only to the reviewer: named NOT REVIEWED in the PR body too
  const namedOnly = approved ? await namedOnlyOf(run, approved, ctx.home) : []
  const writeBody = (state: RunState) =>
    writeFileAtomic(prBodyPath(state.run_id, ctx.home), renderPrBody(state, cost, undefined, namedOnly), 0o644)

  const closed = await changeRun(run.run_id, (state) => {
    const step = closeRun(state, {
      verdict,
      pr,
      replace_pr: options.replacePr,
      changed_since_review: changedSinceReview,
      now: new Date(ctx.now()).toISOString(),
    })
    if (step.state) {
      if (unverified) step.state.pr_unverified = true
      else if (pr !== null) delete step.state.pr_unverified
      writeBody(step.state)
    }
    return step
  })
  const { pruneHomeDaily } = await import('../cost/prune.ts') // caches do not grow for good
  pruneHomeDaily(ctx.home)
  const finished = (state: RunState) => finishedDocument(state, cost, ctx.home)
  if (!options.createPr || closed.pr !== null) return finished(closed) // --create-pr on a run with a PR reports that PR

  // claimed under the lock, opened outside it, recorded under it: two calls never open two PRs
  const claimed = await claimCreation(ctx, run.run_id)
  if ('pr' in claimed) return finished(claimed.pr)
  // gh failing leaves the run finished without a PR, and says so: the same command can be run again
  const { done: created, recorded: withPr } = await callHoldingClaim(
    run.run_id,
    PR_CREATE_KEY,
    () =>
      createPr(ghTarget(closed), {
        title: closed.task.split('\n')[0]!.slice(0, 250),
        bodyFile: prBodyPath(closed.run_id, ctx.home),
        base: closed.base_branch ?? null,
        head: closed.branch === 'HEAD' ? null : closed.branch,
        draft: options.draft,
      }).catch((error) => {
        throw prNotOpened(error, closed, { home: ctx.home, draft: options.draft })
      }),
    (state, created) => {
      const step = attachPr(state, created)
      writeBody(step.state!)
      return step
    },
  )
  // recorded either way (the PR exists), but never reported as approved unless GitHub's head is the approved tree
  if (approved)
    await expectApprovedHead(run, approved, created.number, { home: ctx.home, details: { pr_url: created.url } })
  return finished(withPr)
}

/**
 * gh failed to open the PR: the run is finished all the same and its PR body written, so the way on is the same
 * command once gh is fixed. Said first, since a person reading "gh failed" would think nothing happened.
 */
function prNotOpened(error: unknown, run: RunState, { home, draft }: { home: string; draft: boolean }): unknown {
  if (!isPairLoopError(error)) return error
  const again = `pair-loop finish --verdict ${run.outcome!.verdict} --create-pr${draft ? ' --draft' : ''}`
  const bodyPath = prBodyPath(run.run_id, home)
  return new PairLoopError(
    error.code,
    `the PR was not opened: ${error.message}. Run ${run.run_id} is finished (${run.outcome!.verdict}) and its PR body is written (${bodyPath}); run the same command again to open the PR: \`${again}\``,
    { ...error.details, run_id: run.run_id, finished: true, pr_body_path: bodyPath, next: 'finish', command: again },
  )
}

function finishedDocument(state: RunState, cost: RunCostSummary, home: string) {
  return {
    run_id: state.run_id,
    verdict: state.outcome!.verdict,
    rounds: state.rounds.length,
    cost_usd: cost.total_usd,
    unmeasured: cost.unmeasured, // a role or round with no figure: the cost is then at least this
    pr_body_path: prBodyPath(state.run_id, home),
    pr: state.pr,
    pr_url: state.pr_url,
    ...(state.pr_unverified ? { pr_unverified: true, next: 'pr-check' } : {}),
  }
}

/** gh missing, or GitHub not answering: true (the check waits for the next pr-check); any other failure stands. */
async function unreachable(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await check()
    return false
  } catch (error) {
    const failure = isPairLoopError(error) && error.code === 'gh_error' ? error.details.failure : null
    if (failure === 'missing' || failure === 'network' || failure === 'timeout' || failure === 'server') {
      context().io.stderr(
        `pair-loop finish: ${(error as Error).message}; PR recorded unverified: the next pr-check verifies it\n`,
      )
      return true
    }
    throw error
  }
}

/** The claim on opening the run's PR; while another call holds it, wait (bounded) for the PR it opens. */
async function claimCreation(ctx: Context, runId: string): Promise<{ pr: RunState } | { claimed: true }> {
  const deadline = ctx.now() + CREATION_WAIT_MS
  for (;;) {
    const step = await claimUnderLock(runId, PR_CREATE_KEY, claimPrCreation)
    if (!('held' in step)) return step
    if (ctx.now() > deadline)
      fail(
        'locked',
        `another finish --create-pr of run ${runId} is still opening the PR (pid ${step.held.pid}); run the same command again`,
        { run_id: runId, in_flight: step.held },
      )
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * The approved change's paths the reviewer saw named only: as its review recorded them (review/conduct.ts), else (a
 * review recorded otherwise) read again from the working tree when it is that tree.
 */
async function namedOnlyOf(run: RunState, approved: string, home: string): Promise<NamedOnly[]> {
  const recorded = readNamedOnly(namedOnlyPath(run.run_id, approved, home))
  if (recorded) return recorded
  const { max_diff_bytes, review_exclude } = configOf(run).pair_loop
  const diff = await workingDiff(run.repo, run.base_sha, max_diff_bytes, home, review_exclude ?? [])
  return diff.tree === approved ? diff.unreviewed : []
}
