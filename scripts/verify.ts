#!/usr/bin/env node
// verify: its flags, read into options for lib/commands/verify.ts (is the shipped head the approved tree? for CI).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as verify from '../lib/commands/verify.ts'

const verifyScript = defineScript({
  name: 'verify',
  description: "Check that the PR head's tree (as GitHub reports it) is the tree the reviewer approved.",
  args: {
    ...runArgs,
    pr: {
      type: 'string',
      description: "the PR to check (default: the run's PR; none: the branch's local head)",
      valueHint: 'N',
    },
    'require-vendor': {
      type: 'boolean',
      default: true,
      description:
        'fail (head_not_approved) when a stub (builtin:*) or a custom command approved the run, not claude or codex; --no-require-vendor accepts it',
    },
  },
  async run(args, _io, ctx) {
    return verify.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      pr: integerFlag(args.pr, 'pr', { min: 1 }),
      requireVendor: args['require-vendor'] !== false,
    })
  },
})

export default verifyScript
if (isMain(import.meta)) void main(verifyScript)
