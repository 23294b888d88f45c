#!/usr/bin/env node
// coder-done: its flags, read into options for lib/commands/coder-done.ts (the coder hands its round over).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as coderDone from '../lib/commands/coder-done.ts'
import { fail } from '../lib/ground/errors.ts'

const coderDoneScript = defineScript({
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
  async run(args, _io, ctx) {
    if (args.summary !== undefined && args['summary-file'] !== undefined)
      fail('usage', 'give --summary or --summary-file, not both', { flag: '--summary-file' })
    return coderDone.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      summary: args.summary,
      summaryFile: args['summary-file'],
      findingsAddressed: integerFlag(args['findings-addressed'], 'findings-addressed'),
      sessionId: args['session-id'],
      overCap: args['over-cap'] ?? false,
      overBudget: args['over-budget'] ?? false,
    })
  },
})

export default coderDoneScript
if (isMain(import.meta)) void main(coderDoneScript)
