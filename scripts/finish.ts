#!/usr/bin/env node
// finish: its flags, read into options for lib/commands/finish.ts (close the run, write the PR body; never merges).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as finish from '../lib/commands/finish.ts'
import { fail } from '../lib/ground/errors.ts'
import { OUTCOMES } from '../lib/run/state.ts'

const finishScript = defineScript({
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
  async run(args, _io, ctx) {
    const pr = integerFlag(args.pr, 'pr', { min: 1 }) ?? null
    const createPr = args['create-pr'] ?? false
    if (pr !== null && createPr) fail('usage', 'give --pr N or --create-pr, not both', { flag: '--create-pr' })
    const replacePr = args['replace-pr'] ?? false
    if (replacePr && pr === null) fail('usage', '--replace-pr only goes with --pr N', { flag: '--replace-pr' })
    if (args.draft && !createPr) fail('usage', '--draft only goes with --create-pr', { flag: '--draft' })
    return finish.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      verdict: args.verdict,
      pr,
      createPr,
      draft: args.draft ?? false,
      replacePr,
    })
  },
})

export default finishScript
if (isMain(import.meta)) void main(finishScript)
