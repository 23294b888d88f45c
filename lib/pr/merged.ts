// Merged, once and for all: a PR merged after the last tick is learnt lazily by status and report (one gh look-up,
// its answer cached a while, the merge recorded on the run), and what merged PRs cost, by the report's one definition.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { context, nowIso } from '../ground/context.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { ghTarget, ghTry } from '../ground/gh.ts'
import { prStateCacheDir } from '../ground/paths.ts'
import { type RunFigures, summarise } from '../report/figures.ts'
import { changeRun } from '../run/run-access.ts'
import { mergedAt } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import { PR_META } from './queries.ts'
import { emptyWatch } from './reduce.ts'

/** An open PR (or a look-up that failed) is asked about again after this long, not on every status. */
export const LOOKUP_TTL_MS = 10 * 60_000
/** A status waits this long for gh at most: the figure can wait for the next one. */
const LOOKUP_TIMEOUT_MS = 10_000
/** Look-ups at once (status --all over many runs with open PRs). */
const PARALLEL = 4

interface Looked {
  pr: number
  at: number
  state: 'OPEN' | 'MERGED' | 'CLOSED' | 'unknown'
}

/** The run's current PR is neither merged nor closed as far as the run's record knows. */
export function openInRecord(run: RunState): boolean {
  if (run.pr === null || mergedAt(run) !== null) return false
  return !(run.pr_watch?.pr === run.pr && run.pr_watch.closed_at)
}

const cacheFile = (run: RunState) => join(prStateCacheDir(), `${run.run_id}.json`)

function cached(run: RunState): Looked | null {
  try {
    const looked = JSON.parse(readFileSync(cacheFile(run), 'utf8')) as Looked
    return looked.pr === run.pr && context().now() - looked.at < LOOKUP_TTL_MS ? looked : null
  } catch {
    return null
  }
}

/** One gh call for the PR's state and merge time; `unknown` when gh is missing, refused or slow. */
async function lookUp(run: RunState): Promise<{ state: Looked['state']; merged_at: string | null }> {
  const args = ['api', 'graphql', '-f', `query=${PR_META}`, '-F', 'owner={owner}', '-F', 'name={repo}']
  args.push('-F', `number=${run.pr}`, '-F', 'first=1')
  try {
    const result = await ghTry(ghTarget(run), args, LOOKUP_TIMEOUT_MS)
    const pr = result.ok ? JSON.parse(result.stdout)?.data?.repository?.pullRequest : null
    if (pr?.state === 'OPEN' || pr?.state === 'MERGED' || pr?.state === 'CLOSED')
      return { state: pr.state, merged_at: typeof pr.mergedAt === 'string' ? pr.mergedAt : null }
  } catch {} // a repository gone, an answer that is not JSON: nothing learnt
  return { state: 'unknown', merged_at: null }
}

/** The run, with its PR's merge (or close) recorded when GitHub says so; unchanged when the record already knows. */
export async function learnMerge(run: RunState): Promise<RunState> {
  if (!openInRecord(run) || cached(run)) return run
  const pr = run.pr!
  const { state, merged_at } = await lookUp(run)
  const now = nowIso()
  if (state === 'OPEN' || state === 'unknown') {
    try {
      mkdirSync(prStateCacheDir(), { recursive: true })
      writeFileAtomic(cacheFile(run), JSON.stringify({ pr, at: context().now(), state } satisfies Looked), 0o600, {
        durable: false, // a cache: at worst one more look-up
      })
    } catch {}
    return run
  }
  try {
    return await changeRun(run.run_id, (current) => {
      if (current.pr !== pr || !openInRecord(current)) return { result: current }
      const watch = current.pr_watch?.pr === pr ? current.pr_watch : emptyWatch(pr)
      const next =
        state === 'MERGED' ? { ...watch, merged_at: merged_at ?? now } : { ...watch, closed_at: watch.closed_at ?? now }
      const updated = { ...current, pr_watch: next }
      return { state: updated, result: updated }
    })
  } catch {
    return run // the run locked or the home read-only: the figure waits for the next command
  }
}

/** learnMerge over many runs, a few at a time, in their order. */
export async function learnMerges(runs: RunState[]): Promise<RunState[]> {
  const out = [...runs]
  const todo = runs.flatMap((run, i) => (openInRecord(run) ? [i] : []))
  const worker = async () => {
    for (let i = todo.shift(); i !== undefined; i = todo.shift()) out[i] = await learnMerge(runs[i]!)
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  return out
}

/** What merged PRs cost (status --all's `merged_prs`): the report's definition, through the same summarise(). */
export function mergedPrFigures(runs: RunState[], figures: RunFigures[]) {
  const summary = summarise(figures)
  const merged = runs.flatMap((run, i) =>
    mergedAt(run) === null
      ? []
      : [
          {
            run_id: run.run_id,
            pr: run.pr,
            merged_at: mergedAt(run),
            cost_usd: figures[i]!.spent ?? 0,
          },
        ],
  )
  return {
    count: merged.length,
    /** The merged PRs the figure counts (same-vendor runs are counted apart). */
    counted: summary.merged,
    total_usd: merged.reduce((sum, entry) => sum + entry.cost_usd, 0),
    usd_per_merged_pr: summary.usd_per_merged,
    /** false when an ended run it divides was not fully measured: the figure is then at least this */
    measured: summary.ended_unmeasured === 0,
    definition: "ended cross-vendor runs' spend, merged or not, divided by the PRs merged among them",
    runs: merged,
  }
}
