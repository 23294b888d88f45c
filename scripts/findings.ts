#!/usr/bin/env node
// findings: its flags, read into options for lib/commands/findings.ts (the findings, or SARIF / rdjsonl for tools).
import { defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as findings from '../lib/commands/findings.ts'
import { fail } from '../lib/ground/errors.ts'

const findingsScript = defineScript({
  name: 'findings',
  description: "The run's findings with their replies; --format sarif or rdjsonl for code scanning and reviewdog.",
  args: {
    ...runArgs,
    format: {
      type: 'enum',
      options: [...findings.FORMATS],
      default: 'json',
      description: 'json (pair-loop document), sarif or rdjsonl',
      valueHint: 'json|sarif|rdjsonl',
    },
  },
  async run(args, _io, ctx) {
    // another tool's format is printed as it is: a view for a person of it would be neither
    if ((args as { text?: boolean }).text && args.format !== 'json')
      fail('usage', `--text shows the findings for a person; --format ${args.format} is for another tool: give one`, {
        flag: '--text',
      })
    return findings.run(ctx, { run: args.run, cwd: args.cwd, format: args.format ?? 'json' })
  },
})

export default findingsScript
if (isMain(import.meta)) void main(findingsScript)
