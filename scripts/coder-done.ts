#!/usr/bin/env node
// coder-done: the coder hands its round to the reviewer.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { readBody } from '../lib/body.ts'
import { checkBudgetBrake } from '../lib/cost/brake.ts'
import { newestCoderSession } from '../lib/cost/locate.ts'
import { fail } from '../lib/errors.ts'
import { diffStat } from '../lib/git.ts'
import { changeRun, expectPhase, lastReview, nextStep, nowIso, resolveRun } from '../lib/loop.ts'
import type { RunState } from '../lib/state.ts'

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
  async run(args) {
    if (args.summary !== undefined && args['summary-file'] !== undefined)
      fail('usage', 'give --summary or --summary-file, not both', { flag: '--summary-file' })
    const findingsAddressed = integerFlag(args['findings-addressed'], 'findings-addressed') ?? null
    const summary =
      args['summary-file'] !== undefined
        ? await readBody(args['summary-file'], 'summary-file', args.cwd)
        : (args.summary ?? '').trim()

    const run = resolveRun(args)
    checkCanOpenRound(run, args['over-cap'] ?? false)
    const { override } = await checkBudgetBrake(run, {
      overBudget: args['over-budget'] ?? false,
      command: 'coder-done',
    })
    const sessionId = args['session-id'] ?? newestCoderSession(run.coder, run.repo)
    const diff = await diffStat(run.repo, run.base_sha)

    return changeRun(run.run_id, (state) => {
      checkCanOpenRound(state, args['over-cap'] ?? false) // again under the lock: another command may have moved it
      const n = state.rounds.length + 1
      state.rounds.push({
        n,
        coder: {
          summary,
          session_id: sessionId,
          diff,
          findings_addressed: findingsAddressed,
          over_cap: n > state.max_rounds,
          over_budget: override !== null,
          started_at: lastReview(state)?.at ?? state.created_at,
          done_at: nowIso(),
        },
        reviewer: null,
      })
      if (override) state.budget_overrides.push({ ...override, round: n })
      state.phase = 'reviewing'
      return { state, result: { run_id: state.run_id, round: n, session_id: sessionId, diff, next: nextStep(state) } }
    })
  },
})

/** A new round needs phase coding (or capped with the person's --over-cap), and room under max_rounds. */
function checkCanOpenRound(run: RunState, overCap: boolean): void {
  expectPhase(run, ['coding', 'capped'], 'coder-done')
  const n = run.rounds.length + 1
  if (n > run.max_rounds && !overCap) {
    fail(
      'round_cap',
      `run ${run.run_id} has used its ${run.max_rounds} rounds; ask the person, then pass --over-cap to go on`,
      {
        run_id: run.run_id,
        max_rounds: run.max_rounds,
        rounds: run.rounds.length,
        next: 'ask-user',
      },
    )
  }
}

export default coderDone
if (isMain(import.meta)) await main(coderDone)
