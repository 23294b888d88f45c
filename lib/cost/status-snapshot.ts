// status's cost snapshot (also read by finish): status must start fast, so it shows the last computed cost while
// nothing it came from has changed, and loads the ledger (transcript readers, price table) only when something did.
// Kept as JSON under $PAIR_LOOP_HOME/cache/summaries/<run>.json; not to be confused with the per-transcript cache.
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, REPO_CONFIG_NAME } from '../run/config.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { cacheDir, configPath, pairLoopHome } from '../ground/paths.ts'
import type { RunState } from '../run/state.ts'
import { claudeProjectRoots, codexHome } from '../agents/locate.ts'
import { claudeRepoFolders } from './sessions.ts'
import { coderLocations } from './transcript-env.ts'
import type { RunCostSummary } from './summary.ts'
import { context, nowDate } from '../ground/context.ts'

interface Snapshot {
  revision: number
  watch: Record<string, string>
  summary: RunCostSummary
}

const fingerprint = (path: string) => {
  try {
    const stat = statSync(path)
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`
  } catch {
    return 'absent'
  }
}

/** Where a change would change the figures: the transcripts read, where new sessions appear, the config (prices). */
function watched(run: RunState, files: string[], current: NodeJS.ProcessEnv): string[] {
  return [
    ...files,
    ...coderLocations(run, current).flatMap(({ env }) => watchedIn(run, env)),
    configPath(pairLoopHome(current)),
    join(run.repo, REPO_CONFIG_NAME),
  ]
}

/** One location's folders where new coder sessions would appear. */
function watchedIn(run: RunState, env: NodeJS.ProcessEnv): string[] {
  const day = nowDate() // rollout folders are local dates: a new session today lands under these
  const parts = [
    String(day.getFullYear()),
    String(day.getMonth() + 1).padStart(2, '0'),
    String(day.getDate()).padStart(2, '0'),
  ]
  const sessions = join(codexHome(env), 'sessions')
  return [
    ...claudeProjectRoots(env), // a new folder below the repository's appears here
    ...claudeRepoFolders(run.repo, env).map((folder) => folder.dir),
    sessions,
    join(sessions, parts[0]!),
    join(sessions, ...parts.slice(0, 2)),
    join(sessions, ...parts),
  ]
}

/**
 * The run's cost summary, from the snapshot while it holds. `config` reads the command's config: called only when the
 * figures must be computed again (see runCostSummary). `seen`: the files' prints already taken by this command
 * (status --all checks many runs of a few repositories: their folders are looked at once, not once a run).
 */
export async function cachedCostSummary(
  run: RunState,
  config: () => Pick<Config, 'pricing'>,
  env: NodeJS.ProcessEnv = context().env,
  seen?: Map<string, string>,
): Promise<RunCostSummary> {
  const print = (path: string) => {
    if (!seen) return fingerprint(path)
    let known = seen.get(path)
    if (known === undefined) {
      known = fingerprint(path)
      seen.set(path, known)
    }
    return known
  }
  const file = join(cacheDir(pairLoopHome(env)), 'summaries', `${run.run_id}.json`)
  try {
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
    const unchanged =
      snapshot.revision === run.revision && Object.entries(snapshot.watch).every(([path, was]) => print(path) === was)
    if (unchanged && snapshot.summary.seen && snapshot.summary.unmeasured) return snapshot.summary // an older one is stale
  } catch {}
  const { runCostSummary } = await import('./summary.ts')
  const summary = await runCostSummary(run, config, { env })
  const watch = Object.fromEntries(watched(run, summary.files, env).map((path) => [path, fingerprint(path)]))
  try {
    writeFileAtomic(file, JSON.stringify({ revision: run.revision, watch, summary } satisfies Snapshot), 0o600, {
      durable: false, // a cache: checked when read
    })
  } catch {} // a cache that cannot be written only costs the next status its speed
  return summary
}
