// Where pair-loop keeps things: $PAIR_LOOP_HOME (default ~/.pair-loop) with config.json, runs/ and caches.
import { join, relative, isAbsolute } from 'node:path'
import { context, homeOf, nowDate } from './context.ts'
import { fail } from './errors.ts'

/** Run ids look like 20261130-051500-a1b2c3: anything else can't name a state file. */
export const RUN_ID_PATTERN = /^\d{8}-\d{6}-[0-9a-f]{6}$/

/**
 * The command's `$PAIR_LOOP_HOME` (the Context's); of another environment `env`, made absolute against the directory
 * the command started in (it never changes directory).
 */
export function pairLoopHome(env?: Readonly<NodeJS.ProcessEnv>): string {
  const ctx = context()
  return env === undefined || env === ctx.env ? ctx.home : homeOf(env, ctx.cwd)
}

export const runsDir = (home = context().home) => join(home, 'runs')
export const configPath = (home = context().home) => join(home, 'config.json')
export const cacheDir = (home = context().home) => join(home, 'cache')
/** What `status` and `report` last learnt of each run's PR from GitHub (lib/pr/merged.ts), one file a run. */
export const prStateCacheDir = (home = context().home) => join(cacheDir(home), 'pr-state')

/** The run's state must not lie in the change under review: a home inside the repository is `usage`. */
export function checkHomeOutside(repo: string, home = context().home): void {
  const inside = relative(repo, home)
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)))
    fail(
      'usage',
      `PAIR_LOOP_HOME (${home}) lies inside the repository under review (${repo}); set it outside, e.g. ~/.pair-loop`,
      {
        home,
        repo,
      },
    )
}

/** A run id can never name a path outside runs/: anything not shaped like one is `usage`. */
export function checkRunId(id: string): string {
  if (!RUN_ID_PATTERN.test(id))
    fail('usage', `malformed run id ${JSON.stringify(id)} (expected e.g. 20261130-051500-a1b2c3)`, {
      flag: '--run',
      run_id: id,
    })
  return id
}

export const runStatePath = (id: string, home = context().home) => join(runsDir(home), `${checkRunId(id)}.json`)
export const runArtifactsDir = (id: string, home = context().home) => join(runsDir(home), checkRunId(id))
export const prBodyPath = (id: string, home = context().home) => join(runArtifactsDir(id, home), 'pr-body.md')
/** The snapshot the last `pr-check` read (beside the state, in the run's folder). */
export const prSnapshotPath = (id: string, home = context().home) => join(runArtifactsDir(id, home), 'pr-snapshot.json')
/** The paths a review of `tree` named only (binary, over 16 MiB, not a regular file): the PR body names them too. */
export const namedOnlyPath = (id: string, tree: string, home = context().home) =>
  join(runArtifactsDir(id, home), 'named-only', `${tree.replace(/[^0-9a-f]/g, '')}.json`)
/** The PR diff the final round (`review --pr`) reviewed. */
export const prDiffPath = (id: string, home = context().home) => join(runArtifactsDir(id, home), 'pr-diff.patch')

export function newRunId(now = nowDate(), random = Math.random): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  const date = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`
  const suffix = Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, '0')
  return `${date}-${time}-${suffix}`
}
