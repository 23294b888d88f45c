// Caches under $PAIR_LOOP_HOME/cache/ kept from growing for good: a transcript's cache goes with its transcript, a
// run's cost snapshot and its PR's last look-up with the run (or 30 days after it finished); once a day at most, from
// `start` and `finish`.
import { existsSync, mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cacheDir, prStateCacheDir } from '../ground/paths.ts'
import { listDir } from '../ground/fsutil.ts'
import type { RunState } from '../run/state.ts'
import { listRuns } from '../run/store.ts'
import { pruneSnapshots } from '../snapshot/prune.ts'
import { transcriptOfCacheFile } from './transcript-cache-file.ts'
import { context } from '../ground/context.ts'

const DAY_MS = 86_400_000
export const KEEP_FINISHED_MS = 30 * DAY_MS

export interface Pruned {
  transcripts: number
  summaries: number
  /** What was last learnt of a run's PR (lib/pr/merged.ts). */
  pr_states: number
  /** The snapshot store's objects, manifests and stat caches (lib/snapshot/prune.ts). */
  snapshots: number
}

/** The home's caches pruned against every run on disk, once a day at most (`start` and `finish` call it). */
export function pruneHomeDaily(home = context().home): Pruned | null {
  return pruneCachesDaily(() => listRuns(home).flatMap((entry) => ('state' in entry ? [entry.state] : [])), home)
}

/**
 * Prune unless it was done in the last day (a marker file's mtime says when; the runs are read only when it is due);
 * never fails the command.
 */
export function pruneCachesDaily(runs: () => RunState[], home = context().home, now = context().now()): Pruned | null {
  const marker = join(cacheDir(home), '.pruned')
  try {
    if (existsSync(marker) && now - statSync(marker).mtimeMs < DAY_MS) return null
    const pruned = pruneCaches(runs(), home, now)
    mkdirSync(cacheDir(home), { recursive: true })
    writeFileSync(marker, '')
    utimesSync(marker, now / 1000, now / 1000)
    return pruned
  } catch {
    return null // a cache is only a speed-up: a folder that cannot be pruned now can be next time
  }
}

/** Remove the caches nothing will read again; `runs` are every run on disk. */
export function pruneCaches(runs: RunState[], home = context().home, now = context().now()): Pruned {
  const cache = cacheDir(home)
  const pruned = { transcripts: 0, summaries: 0, pr_states: 0, snapshots: pruneSnapshots(runs, home, now) }
  const transcripts = join(cache, 'transcripts')
  for (const name of listDir(transcripts)) {
    const file = join(transcripts, name)
    // a delta goes with its base; a base (or an older cache format) whose transcript is gone goes
    const base = name.endsWith('.delta') ? file.replace(/\.delta$/, '.bin') : file
    const transcript = existsSync(base) ? transcriptOfCacheFile(base) : null
    if (transcript !== null && existsSync(transcript)) continue
    rmSync(file, { force: true })
    pruned.transcripts++
  }
  const keep = new Set(
    runs
      .filter((run) => !run.outcome || now - Date.parse(run.outcome.finished_at) < KEEP_FINISHED_MS)
      .map((run) => `${run.run_id}.json`),
  )
  const perRun = [
    [join(cache, 'summaries'), 'summaries'],
    [prStateCacheDir(home), 'pr_states'],
  ] as const
  for (const [dir, count] of perRun)
    for (const name of listDir(dir)) {
      if (keep.has(name)) continue
      rmSync(join(dir, name), { force: true })
      pruned[count]++
    }
  return pruned
}
