#!/usr/bin/env node
// codes: no flags of its own; lib/commands/codes.ts prints the error-code table.
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import * as codes from '../lib/commands/codes.ts'

const codesScript = defineScript({
  name: 'codes',
  description: 'Print the error-code table: code, exit status, whether a retry can help, meaning.',
  args: {},
  async run(_args, _io, ctx) {
    return codes.run(ctx)
  },
})

export default codesScript
if (isMain(import.meta)) void main(codesScript)
