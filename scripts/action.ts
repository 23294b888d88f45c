#!/usr/bin/env node
// action: the GitHub Action's steps (action.yml), for lib/commands/action.ts; inputs come as GitHub passes them.
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import * as action from '../lib/commands/action.ts'

const actionScript = defineScript({
  name: 'action',
  description: "The GitHub Action's step: verify the PR ships its approved tree, or review the PR (INPUT_MODE).",
  args: {
    mode: {
      type: 'string',
      description: 'verify (default) or review; else the INPUT_MODE GitHub passes',
      valueHint: 'MODE',
    },
  },
  async run(args, _io, ctx) {
    return action.run(ctx, { mode: args.mode })
  },
})

export default actionScript
if (isMain(import.meta)) void main(actionScript)
