#!/usr/bin/env node
// report: one self-contained HTML page (inline CSS and SVG, no network) of a run, or of every run with --all.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { pairLoopHome } from '../lib/paths.ts'
import { listedRuns, type ReportEntry, renderAllRunsReport, runPageName } from '../lib/report/all-runs-report.ts'
import { openInBrowser } from '../lib/report/open.ts'
import { learnMerge, learnMerges } from '../lib/pr/merged.ts'
import { dirname, join } from 'node:path'
import { reportPath, writeReport } from '../lib/report/output.ts'
import { costOfRun } from '../lib/report/run-cost.ts'
import { renderRunReport } from '../lib/report/run-report.ts'
import { resolveRun } from '../lib/run-access.ts'
import { listRuns } from '../lib/store.ts'
import { context } from '../lib/context.ts'

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
    open: { type: 'boolean', description: 'open the page in the browser ($BROWSER, else the desktop’s opener)' },
    out: {
      type: 'string',
      description: 'the HTML file to write (default: $PAIR_LOOP_HOME/reports/<run_id>.html, or all.html)',
      valueHint: 'file',
    },
  },
  async run(args, io) {
    if (args.all && args.run !== undefined)
      fail('usage', '--all reports every run; give --all or --run, not both', { flag: '--run' })
    if (args.out === '') fail('usage', '--out needs a file name', { flag: '--out' })
    const home = pairLoopHome()
    const cwd = args.cwd ?? context().cwd
    const now = new Date()
    if (args.all) {
      const listed = listRuns(home)
      const states = await learnMerges(listed.flatMap((entry) => ('state' in entry ? [entry.state] : [])))
      const entries: ReportEntry[] = [
        ...states.map((run) => ({ run, cost: costOfRun(run) })),
        ...listed.flatMap((entry) =>
          'error' in entry
            ? [{ unreadable: { run_id: entry.run_id, code: entry.error.code, message: entry.error.message } }]
            : [],
        ),
      ]
      const path = reportPath({ out: args.out, cwd, home, name: 'all' })
      // each run listed one by one gets its page beside this one, which links it
      const pages = listedRuns(entries).map(({ run, cost }) => {
        const page = join(dirname(path), runPageName(run.run_id))
        writeReport(page, renderRunReport(run, cost, now))
        return page
      })
      writeReport(path, renderAllRunsReport(entries, now))
      return { path, runs: states.map((run) => run.run_id), pages, ...(await opened(args.open, path, io.stderr)) }
    }
    const run = await learnMerge(resolveRun(args, { allowFinished: true }))
    const path = reportPath({ out: args.out, cwd, home, name: run.run_id })
    writeReport(path, renderRunReport(run, costOfRun(run), now))
    return { path, runs: [run.run_id], ...(await opened(args.open, path, io.stderr)) }
  },
})

/** `opened: true` once the browser was started on the page (--open); nothing without --open. */
async function opened(open: boolean | undefined, path: string, stderr: (text: string) => void) {
  return open ? { opened: await openInBrowser(path, stderr) } : {}
}

export default report
if (isMain(import.meta)) void main(report)
