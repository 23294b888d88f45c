#!/usr/bin/env node
// codes: the closed error-code table, for agents and scripts that branch on exit status.
import { defineScript, isMain, main } from '../lib/cli.ts'
import { codeTable } from '../lib/errors.ts'

const codes = defineScript({
  name: 'codes',
  description: 'Print the error-code table: code, exit status, whether a retry can help, meaning.',
  args: {},
  async run() {
    return { codes: codeTable() }
  },
})

export default codes
if (isMain(import.meta)) void main(codes)
