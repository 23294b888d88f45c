// The change as the reviewer reads it: the working tree's snapshot (lib/snapshot/) against the base, every changed
// path named, the text diff capped. The snapshot's tree id is recorded with the review: what it names is what was shown.
import { pairLoopHome } from '../ground/paths.ts'
import { byTree } from '../snapshot/by-tree.ts'
import { snapshotDiff } from '../snapshot/diff.ts'
import type { NamedOnly } from '../snapshot/named-only.ts'
import { type RepoSnapshot, takeSnapshot } from '../snapshot/snapshot.ts'
import { type ReviewerInstructions, reviewerInstructions } from './instructions.ts'

export interface WorkingDiff {
  stat: string
  diff: string
  /**
   * The diff's size in bytes. When `truncated`, a lower bound: git is stopped once the diff passes the cap, so what
   * it would have printed after that is never read (nor counted).
   */
  bytes: number
  truncated: boolean
  /** The snapshot's tree id, the bytes this diff was built from: null for a diff that is not of the working tree. */
  tree: string | null
  /** Paths named only (binary, too big, not a regular file): the reviewer is told it did not see them. */
  unreviewed: NamedOnly[]
  /** The tree of the files shown, in pair-loop's store (null: not the working tree): the next round's delta starts there. */
  shown_tree?: string | null
}

/**
 * The working tree (untracked files included, HANDOFF.md aside) against the base commit, snapshotted and diffed; the
 * paths `exclude` matches (the run's `pair_loop.review_exclude`) named only.
 */
export async function workingDiff(
  repo: string,
  base: string,
  maxBytes: number,
  home = pairLoopHome(),
  exclude: readonly string[] = [],
): Promise<WorkingDiff> {
  return (await reviewedChange(repo, base, maxBytes, home, exclude)).diff
}

/** One snapshot for all the reviewer is shown: the diff, and the instruction files at base and those it touches. */
export async function reviewedChange(
  repo: string,
  base: string,
  maxBytes: number,
  home = pairLoopHome(),
  exclude: readonly string[] = [],
): Promise<{ diff: WorkingDiff; instructions: ReviewerInstructions; snapshot: RepoSnapshot }> {
  const snap = await takeSnapshot(repo, base, { home })
  // kept by what it was built with: another exclude is another view of the same tree
  const key = `review:${maxBytes}${exclude.length ? `:${JSON.stringify(exclude)}` : ''}`
  const shown = await byTree(home, snap, key, isReviewedChange, async () => ({
    diff: await diffOf(snap, maxBytes, exclude),
    instructions: await reviewerInstructions(snap),
  }))
  return { ...shown, snapshot: snap } // the snapshot itself: the reviewer's read-only copy is written from it
}

/** The shape of a kept reviewed change (by-tree.ts): one that is not this is computed again. */
function isReviewedChange(value: unknown): value is { diff: WorkingDiff; instructions: ReviewerInstructions } {
  const kept = value as { diff?: Partial<WorkingDiff>; instructions?: Partial<ReviewerInstructions> } | null
  return (
    typeof kept?.diff?.stat === 'string' &&
    typeof kept.diff.diff === 'string' &&
    typeof kept.diff.tree === 'string' &&
    Array.isArray(kept.diff.unreviewed) &&
    typeof kept.diff.shown_tree === 'string' &&
    Array.isArray(kept.instructions?.base) &&
    Array.isArray(kept.instructions.touched)
  )
}

async function diffOf(snap: RepoSnapshot, maxBytes: number, exclude: readonly string[]): Promise<WorkingDiff> {
  const diff = await snapshotDiff(snap, maxBytes, exclude)
  return {
    stat: diff.stat,
    diff: diff.diff,
    bytes: diff.bytes,
    truncated: diff.truncated,
    tree: snap.tree,
    unreviewed: diff.unreviewed,
    shown_tree: diff.shownTree,
  }
}
