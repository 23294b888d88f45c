// report: one self-contained HTML page (inline CSS and SVG, no network) of a run, or of every run (each listed run's
// page beside it); optionally handed to the person's browser.
import { dirname, join } from 'node:path'
import type { Context } from '../ground/context.ts'
import { learnMerge, learnMerges } from '../pr/merged.ts'
import { listedRuns, type ReportEntry, renderAllRunsReport, runPageName } from '../report/all-runs-report.ts'
import { openInBrowser } from '../report/open.ts'
import { reportPath, writeReport } from '../report/output.ts'
import { costOfRun } from '../report/run-cost.ts'
import { renderRunReport } from '../report/run-report.ts'
import { resolveRun } from '../run/run-access.ts'
import { listRuns } from '../run/store.ts'

export interface ReportOptions {
  run?: string
  cwd?: string
  /** Every run in one table (not with `run`). */
  all: boolean
  /** The HTML file to write (default: $PAIR_LOOP_HOME/reports/<run_id>.html, or all.html). */
  out?: string
  /** Open the page in the browser. */
  open: boolean
}

export async function run(ctx: Context, options: ReportOptions) {
  const { home } = ctx
  const cwd = options.cwd ?? ctx.cwd
  const now = new Date(ctx.now())
  const opened = async (path: string) => (options.open ? { opened: await openInBrowser(path, ctx.io.stderr) } : {})
  if (options.all) {
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
    const path = reportPath({ out: options.out, cwd, home, name: 'all' })
    // each run listed one by one gets its page beside this one, which links it
    const pages = listedRuns(entries).map(({ run, cost }) => {
      const page = join(dirname(path), runPageName(run.run_id))
      writeReport(page, renderRunReport(run, cost, now))
      return page
    })
    writeReport(path, renderAllRunsReport(entries, now))
    return { path, runs: states.map((run) => run.run_id), pages, ...(await opened(path)) }
  }
  const run = await learnMerge(resolveRun(options, { allowFinished: true }))
  const path = reportPath({ out: options.out, cwd, home, name: run.run_id })
  writeReport(path, renderRunReport(run, costOfRun(run), now))
  return { path, runs: [run.run_id], ...(await opened(path)) }
}
