#!/usr/bin/env node
// reply: its flags, read into options for lib/commands/reply.ts (the coder answers one finding, once).
import { defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as reply from '../lib/commands/reply.ts'
import { fail } from '../lib/ground/errors.ts'
import { DISPOSITIONS } from '../lib/run/state.ts'

const replyScript = defineScript({
  name: 'reply',
  description: "Record the coder's answer to one reviewer finding (fixed, wont-fix, question, ack).",
  args: {
    ...runArgs,
    finding: {
      type: 'string',
      required: true,
      description: 'the finding id, round.number (e.g. 1.2)',
      valueHint: 'R.N',
    },
    disposition: { type: 'enum', options: [...DISPOSITIONS], required: true, description: 'how the coder answers it' },
    'body-file': {
      type: 'string',
      required: true,
      description: 'the answer, from a file or - for stdin',
      valueHint: 'file',
    },
    'post-pr': { type: 'boolean', description: "also post the answer as a comment on the run's PR (through gh), once" },
  },
  async run(args, _io, ctx) {
    if (!/^\d+\.\d+$/.test(args.finding))
      fail('usage', `--finding must look like 1.2 (round.number), got ${JSON.stringify(args.finding)}`, {
        flag: '--finding',
      })
    return reply.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      finding: args.finding,
      disposition: args.disposition,
      bodyFile: args['body-file'],
      postPr: args['post-pr'] ?? false,
    })
  },
})

export default replyScript
if (isMain(import.meta)) void main(replyScript)
