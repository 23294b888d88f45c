// What is computed from a snapshot's objects alone (the reviewer's diff, its instruction files, the counts) is kept by
// the ids it was computed from: the same base tree, tree and cap give the same bytes, so a snapshot seen before costs
// nothing but the look that found it unchanged. Kept under $PAIR_LOOP_HOME, which the coder cannot write.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hexDigest } from '../ground/digest.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import type { RepoSnapshot } from './snapshot.ts'

/** Bump when what is kept changes shape or meaning: an old entry is then never read. */
const VERSION = 3 // 2: text or binary judged by content (issue 34); 3: a path named only, with its size

const entryFile = (home: string, key: string) => join(home, 'cache', 'snapshot', 'by-tree', `${key}.json`)

/**
 * `compute(snap)`, or what it gave last time for the same base tree, tree, skipped paths and `what`. A snapshot with
 * submodules is computed each time (what it shows of them depends on more than its tree).
 */
export async function byTree<T extends object>(
  home: string,
  snap: RepoSnapshot,
  what: string,
  valid: (value: unknown) => value is T,
  compute: () => Promise<T>,
): Promise<T> {
  if (snap.submodules.length > 0) return compute()
  const key = hexDigest(JSON.stringify([VERSION, what, snap.git.format, snap.baseTree, snap.tree, snap.skipped]))
  const file = entryFile(home, key)
  try {
    const kept: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (valid(kept)) return kept
  } catch {
    // not kept yet, or damaged: computed again
  }
  const value = await compute()
  writeFileAtomic(file, JSON.stringify(value), 0o600, { durable: false })
  return value
}
