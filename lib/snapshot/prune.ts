// The snapshot store and its caches kept from growing for good: an object, a tree's manifest or a private index not
// written for 30 days goes (an object is written again by the next snapshot that needs it), except the manifests of
// the trees the kept runs handed over and had reviewed (verify names a PR head's differing paths from them).
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { listDir } from '../ground/fsutil.ts'
import type { RunState } from '../run/state.ts'

const KEEP_MS = 30 * 86_400_000

/** Files removed: objects, manifests, private indexes. */
export function pruneSnapshots(runs: RunState[], home: string, now: number): number {
  const trees = new Set(runs.flatMap((run) => run.rounds.flatMap((round) => [round.coder.tree, round.reviewer?.tree])))
  let removed = 0
  const old = (file: string) => {
    try {
      return now - statSync(file).mtimeMs > KEEP_MS
    } catch {
      return false
    }
  }
  const drop = (file: string) => {
    rmSync(file, { force: true })
    removed++
  }
  // objects, and the sizes noted of blobs too big to keep (store.ts): a snapshot that needs one writes it again
  for (const format of listDir(join(home, 'store')))
    for (const kept of ['objects', 'sizes'])
      for (const fan of listDir(join(home, 'store', format, kept)))
        for (const name of listDir(join(home, 'store', format, kept, fan))) {
          const file = join(home, 'store', format, kept, fan, name)
          if (old(file)) drop(file)
        }
  const manifests = join(home, 'cache', 'snapshot', 'trees')
  for (const name of listDir(manifests))
    if (!trees.has(name.replace(/\.(leaves|json)$/, '')) && old(join(manifests, name))) drop(join(manifests, name))
  // diffs kept by tree ids (by-tree.ts) and base commits' trees (snapshot.ts): computed again when needed
  for (const kept of ['by-tree', 'commits']) {
    const dir = join(home, 'cache', 'snapshot', kept)
    for (const name of listDir(dir)) if (old(join(dir, name))) drop(join(dir, name))
  }
  const caches = join(home, 'cache', 'snapshot')
  // the private indexes, the kinds and last snapshots beside them (snapshot.ts): a stale one is rebuilt next time
  for (const name of listDir(caches))
    if ((name.endsWith('.index') || name.endsWith('.json')) && old(join(caches, name))) drop(join(caches, name))
  return removed
}
