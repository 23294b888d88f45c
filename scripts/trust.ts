#!/usr/bin/env node
// trust: its flags, read into options for lib/commands/trust.ts (trust this repository's .pair-loop.json, show, revoke).
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import * as trust from '../lib/commands/trust.ts'
import { fail } from '../lib/ground/errors.ts'

const trustScript = defineScript({
  name: 'trust',
  description:
    "Trust this repository's .pair-loop.json as it is now, and the in-tree files its commands run, so they apply.",
  args: {
    show: { type: 'boolean', description: 'say whether the file is trusted, changing nothing' },
    revoke: { type: 'boolean', description: 'take the trust back' },
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args, _io, ctx) {
    if (args.show && args.revoke) fail('usage', 'give --show or --revoke, not both', { flag: '--revoke' })
    return trust.run(ctx, { action: args.show ? 'show' : args.revoke ? 'revoke' : 'trust', cwd: args.cwd })
  },
})

export default trustScript
if (isMain(import.meta)) void main(trustScript)
