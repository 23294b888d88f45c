#!/usr/bin/env node
// report: one self-contained HTML page (inline CSS and SVG, no network) of a run, or of every run with --all.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { pairLoopHome } from '../lib/paths.ts'
import { type ReportEntry, renderAllRunsReport } from '../lib/report/all-runs-report.ts'
import { reportPath, writeReport } from '../lib/report/output.ts'
import { costOfRun } from '../lib/report/run-cost.ts'
import { renderRunReport } from '../lib/report/run-report.ts'
import { resolveRun } from '../lib/run-access.ts'
import { listRuns } from '../lib/store.ts'

const report = defineScript({
  name: 'report',
  description:
    'One self-contained HTML page for a person (inline CSS and SVG, no network): a run’s rounds, findings, replies and cost, or every run with --all.',
  args: {
    ...runArgs,
    all: {
      type: 'boolean',
      description: 'every run in one table: rounds to approval, approval rate, dollars per outcome',
    },
    out: {
      type: 'string',
      description: 'the HTML file to write (default: $PAIR_LOOP_HOME/reports/<run_id>.html, or all.html)',
      valueHint: 'file',
    },
  },
  async run(args) {
    if (args.all && args.run !== undefined)
      fail('usage', '--all reports every run; give --all or --run, not both', { flag: '--run' })
    if (args.out === '') fail('usage', '--out needs a file name', { flag: '--out' })
    const home = pairLoopHome()
    const cwd = args.cwd ?? process.cwd()
    const now = new Date()
    if (args.all) {
      const entries: ReportEntry[] = listRuns(home).map((entry) =>
        'state' in entry
          ? { run: entry.state, cost: costOfRun(entry.state) }
          : { unreadable: { run_id: entry.run_id, code: entry.error.code, message: entry.error.message } },
      )
      const path = reportPath({ out: args.out, cwd, home, name: 'all' })
      writeReport(path, renderAllRunsReport(entries, now))
      return { path, runs: entries.flatMap((e) => ('run' in e ? [e.run.run_id] : [])) }
    }
    const run = resolveRun(args, { allowFinished: true })
    const path = reportPath({ out: args.out, cwd, home, name: run.run_id })
    writeReport(path, renderRunReport(run, costOfRun(run), now))
    return { path, runs: [run.run_id] }
  },
})

export default report
if (isMain(import.meta)) void main(report)
