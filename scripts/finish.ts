#!/usr/bin/env node
// finish: close the run, write the PR body; later calls may only add the PR (--pr N or --create-pr, once). Never merges.
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { cachedCostSummary } from '../lib/cost/status-snapshot.ts'
import { fail } from '../lib/errors.ts'
import { writeFileAtomic } from '../lib/fsutil.ts'
import { createPr } from '../lib/gh.ts'
import { changeRun, checkBranch, configOf, nowIso, resolveRun } from '../lib/run-access.ts'
import { prBodyPath } from '../lib/paths.ts'
import { renderPrBody } from '../lib/pr-body.ts'
import { OUTCOMES, type RunState } from '../lib/state.ts'
import { attachPr, checkVerdict, closeRun } from '../lib/transitions.ts'

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
    checkVerdict(run, args.verdict)
    if (createPrWanted && run.pr === null) await checkBranch(run, 'finish --create-pr')
    const cost = await cachedCostSummary(run, () => configOf(run))
    const writeBody = (state: RunState) => writeFileAtomic(prBodyPath(state.run_id), renderPrBody(state, cost), 0o644)

    const closed = await changeRun(run.run_id, (state) => {
      const step = closeRun(state, { verdict: args.verdict, pr, replace_pr: replacePr, now: nowIso() })
      if (step.state) writeBody(step.state)
      return step
    })
    if (!createPrWanted || closed.pr !== null) return document(closed) // --create-pr on a run with a PR reports that PR

    // gh failing leaves the run finished without a PR: the same command can be run again
    const created = await createPr(closed.repo, {
      title: closed.task.split('\n')[0]!.slice(0, 250),
      bodyFile: prBodyPath(closed.run_id),
      base: closed.base_branch ?? null,
      head: closed.branch === 'HEAD' ? null : closed.branch,
      draft: args.draft ?? false,
    })
    const withPr = await changeRun(run.run_id, (state) => {
      const step = attachPr(state, created)
      writeBody(step.state!)
      return step
    })
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

export default finish
if (isMain(import.meta)) await main(finish)
