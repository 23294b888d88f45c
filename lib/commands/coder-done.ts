// coder-done: the coder hands its round to the reviewer: the working tree's change against the base, the summary, the
// coder's session, recorded as a new round once the round cap, the emptiness check and the budget brake let it.
import { readBody } from '../ground/body-input.ts'
import type { Context } from '../ground/context.ts'
import { checkBudgetBrake } from '../cost/brake.ts'
import { currentCoderSession } from '../cost/coder.ts'
import { coderLocations } from '../cost/transcript-env.ts'
import { fail, toPairLoopError } from '../ground/errors.ts'
import { changeRun, checkBranch, configOf, resolveRun } from '../run/run-access.ts'
import { inPrPhase, movedSinceApproval, nextFields } from '../run/run-queries.ts'
import { changeNow } from '../snapshot/now.ts'
import type { Phase, RunState } from '../run/state.ts'
import { stripControl } from '../ground/text.ts'
import { checkCanOpenRound, openRound } from '../run/transitions.ts'

export interface CoderDoneOptions {
  run?: string
  cwd?: string
  /** What was done this round, given inline; or `summaryFile`, a file or `-` for stdin (never both). */
  summary?: string
  summaryFile?: string
  findingsAddressed?: number
  /** The coder's session id (default: its newest transcript for the repository in the run's window). */
  sessionId?: string
  /** The person chose to go past max_rounds. */
  overCap: boolean
  /** The person chose to go on at or over the budget. */
  overBudget: boolean
}

export async function run(ctx: Context, options: CoderDoneOptions) {
  const summary =
    options.summaryFile !== undefined
      ? await readBody(options.summaryFile, 'summary-file', { cwd: options.cwd ?? ctx.cwd, stdin: ctx.io.stdin })
      : stripControl(options.summary ?? '').trim()
  const run = runOrOpenPr(options)
  await checkBranch(run, 'coder-done')
  // the working tree read once: what is handed over, and (on an approved run) whether it moved since approval
  const handedOver = await changeNow(run)
  const changedSinceReview = movedSinceApproval(run, handedOver.tree)
  checkCanOpenRound(run, options.overCap, changedSinceReview) // before the costly parts; again under the lock
  if (handedOver.diff.files === 0) refuseEmpty(run.run_id, run.phase, run.base_sha)
  const { override } = await checkBudgetBrake(run, configOf(run), {
    overBudget: options.overBudget,
    command: 'coder-done',
  })
  const sessionId =
    options.sessionId ??
    coderLocations(run).reduce<string | null>((found, { env }) => found ?? currentCoderSession(run, env), null)
  const { diff, tree } = handedOver

  const state = await changeRun(run.run_id, (current) =>
    openRound(current, {
      summary,
      session_id: sessionId,
      diff,
      tree,
      findings_addressed: options.findingsAddressed ?? null,
      over_cap: options.overCap,
      override,
      changed_since_review: changedSinceReview,
      now: new Date(ctx.now()).toISOString(),
    }),
  )
  return { run_id: state.run_id, round: state.rounds.length, session_id: sessionId, diff, ...nextFields(state) }
}

/** The active run; with none, the newest finished run if its PR is open (a fix after the PR is a round). */
function runOrOpenPr(options: CoderDoneOptions): RunState {
  try {
    return resolveRun(options)
  } catch (error) {
    if (options.run !== undefined || toPairLoopError(error).code !== 'run_not_found') throw error
    const newest = resolveRun(options, { allowFinished: true })
    if (newest.phase === 'finished' && inPrPhase(newest)) return newest
    throw error
  }
}

/** Nothing changed against the base: a reviewer would approve nothing, so there is nothing to hand over yet. */
function refuseEmpty(runId: string, phase: Phase, base: string): never {
  fail(
    'wrong_phase',
    `coder-done has nothing to hand over: the working tree is the same as the base commit ${base.slice(0, 12)}; make the change, then run coder-done again`,
    { run_id: runId, phase, expected: 'a change against the base', files: 0, base_sha: base, next: 'coder-done' },
  )
}
