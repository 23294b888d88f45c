#!/usr/bin/env node
// report: its flags, read into options for lib/commands/report.ts (an HTML page of a run, or of every run).
import { defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as report from '../lib/commands/report.ts'
import { fail } from '../lib/ground/errors.ts'

const reportScript = defineScript({
  name: 'report',
  description:
    "One self-contained HTML page for a person (inline CSS and SVG, no network): a run's rounds, findings, replies and cost, or every run with --all.",
  args: {
    ...runArgs,
    all: {
      type: 'boolean',
      description: 'every run in one table: rounds to approval, approval rate, dollars per outcome',
    },
    open: { type: 'boolean', description: "open the page in the browser ($BROWSER, else the desktop's opener)" },
    out: {
      type: 'string',
      description: 'the HTML file to write (default: $PAIR_LOOP_HOME/reports/<run_id>.html, or all.html)',
      valueHint: 'file',
    },
  },
  async run(args, _io, ctx) {
    if (args.all && args.run !== undefined)
      fail('usage', '--all reports every run; give --all or --run, not both', { flag: '--run' })
    if (args.out === '') fail('usage', '--out needs a file name', { flag: '--out' })
    return report.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      all: args.all ?? false,
      out: args.out,
      open: args.open ?? false,
    })
  },
})

export default reportScript
if (isMain(import.meta)) void main(reportScript)
