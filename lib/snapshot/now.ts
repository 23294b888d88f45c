// The run's change now, as the commands that compare it need it: its snapshot's tree id, and its counts.
import { pairLoopHome } from '../ground/paths.ts'
import type { DiffStat, RunState } from '../run/state.ts'
import { byTree } from './by-tree.ts'
import { snapshotDiff } from './diff.ts'
import { takeSnapshot } from './snapshot.ts'

export interface ChangeNow {
  /** The snapshot's tree id: the fingerprint of the working tree's bytes. */
  tree: string
  diff: DiffStat
}

/** The working tree of the run's repository against its base: tree id and counts (no diff body). */
export async function changeNow(run: Pick<RunState, 'repo' | 'base_sha'>, home = pairLoopHome()): Promise<ChangeNow> {
  const snap = await takeSnapshot(run.repo, run.base_sha, { home })
  const counts = await byTree(home, snap, 'counts', isCounts, async () => (await snapshotDiff(snap, 0)).counts)
  return { tree: snap.tree, diff: counts }
}

/** The snapshot's tree id alone. */
export async function treeNow(run: Pick<RunState, 'repo' | 'base_sha'>, home = pairLoopHome()): Promise<string> {
  return (await takeSnapshot(run.repo, run.base_sha, { home })).tree
}

const isCounts = (value: unknown): value is DiffStat =>
  ['files', 'insertions', 'deletions'].every(
    (key) => typeof (value as Record<string, unknown> | null)?.[key] === 'number',
  )
