#!/usr/bin/env node
// coder-done: the coder hands its round to the reviewer.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { readBody } from '../lib/body-input.ts'
import { checkBudgetBrake } from '../lib/cost/brake.ts'
import { currentCoderSession } from '../lib/cost/coder.ts'
import { transcriptEnvOf } from '../lib/cost/transcript-env.ts'
import { fail } from '../lib/errors.ts'
import { stripControl } from '../lib/text.ts'
import { changeNow } from '../lib/snapshot/now.ts'
import { changeRun, checkBranch, configOf, nowIso, resolveRun } from '../lib/run-access.ts'
import { movedSinceApproval, nextFields } from '../lib/run-queries.ts'
import { checkCanOpenRound, openRound } from '../lib/transitions.ts'

const coderDone = defineScript({
  name: 'coder-done',
  description: 'Record the coder round (summary, session, diff stat) and hand over to the reviewer.',
  args: {
    ...runArgs,
    summary: {
      type: 'string',
      description: 'what was done this round (short; prefer --summary-file)',
      valueHint: 'text',
    },
    'summary-file': { type: 'string', description: 'read the summary from a file, or - for stdin', valueHint: 'file' },
    'findings-addressed': { type: 'string', description: 'how many findings this round addressed', valueHint: 'N' },
    'session-id': {
      type: 'string',
      description: "the coder's session id (default: its newest transcript for this repo)",
      valueHint: 'id',
    },
    'over-cap': { type: 'boolean', description: 'the person chose to go past max_rounds' },
    'over-budget': {
      type: 'boolean',
      description: 'the person chose to go on at or over the budget (recorded on the run)',
    },
  },
  async run(args, io) {
    if (args.summary !== undefined && args['summary-file'] !== undefined)
      fail('usage', 'give --summary or --summary-file, not both', { flag: '--summary-file' })
    const findingsAddressed = integerFlag(args['findings-addressed'], 'findings-addressed') ?? null
    const summary =
      args['summary-file'] !== undefined
        ? await readBody(args['summary-file'], 'summary-file', { cwd: args.cwd, stdin: io.stdin })
        : stripControl(args.summary ?? '').trim()
    const overCap = args['over-cap'] ?? false

    const run = resolveRun(args)
    await checkBranch(run, 'coder-done')
    // the working tree snapshotted once: what is handed over, and (on an approved run) whether it moved since approval
    const now = await changeNow(run)
    const changedSinceReview = movedSinceApproval(run, now.tree)
    checkCanOpenRound(run, overCap, changedSinceReview) // before the costly parts; again under the lock, where it counts
    if (now.diff.files === 0) refuseEmpty(run.run_id, run.phase, run.base_sha)
    const { override } = await checkBudgetBrake(run, configOf(run), {
      overBudget: args['over-budget'] ?? false,
      command: 'coder-done',
    })
    const sessionId = args['session-id'] ?? currentCoderSession(run, transcriptEnvOf(run))
    const { diff, tree } = now

    const state = await changeRun(run.run_id, (current) =>
      openRound(current, {
        summary,
        session_id: sessionId,
        diff,
        tree,
        findings_addressed: findingsAddressed,
        over_cap: overCap,
        override,
        changed_since_review: changedSinceReview,
        now: nowIso(),
      }),
    )
    return { run_id: state.run_id, round: state.rounds.length, session_id: sessionId, diff, ...nextFields(state) }
  },
})

/** Nothing changed against the base: a reviewer would approve nothing, so there is nothing to hand over yet. */
function refuseEmpty(runId: string, phase: string, base: string): never {
  fail(
    'wrong_phase',
    `coder-done has nothing to hand over: the working tree is the same as the base commit ${base.slice(0, 12)}; make the change, then run coder-done again`,
    { run_id: runId, phase, expected: 'a change against the base', files: 0, base_sha: base, next: 'coder-done' },
  )
}

export default coderDone
if (isMain(import.meta)) void main(coderDone)
