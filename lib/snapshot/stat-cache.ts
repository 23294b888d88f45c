// pair-loop's own stat cache: a file whose device, inode, size, mode, mtime and ctime are those it had when it was
// hashed is not hashed again. It lives under $PAIR_LOOP_HOME (git's index, the usual stat cache, is the coder's to
// write). ctime cannot be set back by a user, and an entry is kept only for a file last changed well before the
// snapshot began (a "racy" entry, changed in the same instant, is hashed again next time, as git does).
import { readFileSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { hexDigest } from '../digest.ts'
import { writeFileAtomic } from '../fsutil.ts'
import type { BlobKind } from './files.ts'

/** Timestamps this close to the snapshot's start may not yet show a write made in the same instant (coarse clocks). */
const RACY_MS = 2000

/** One flat list, a row of ROW values per file: path, dev, ino, size, mtimeMs, ctimeMs, mode, blob id, kind. */
type Rows = (string | number)[]
const ROW = 9

export interface StatCache {
  /** The blob id and kind recorded for exactly this stat data, if any. */
  get(path: string, stats: Stats): { oid: string; kind: BlobKind } | undefined
  set(path: string, stats: Stats, oid: string, kind: BlobKind): void
  save(): void
}

const cacheFile = (home: string, repo: string) =>
  join(home, 'cache', 'snapshot', `${hexDigest(repo).slice(0, 24)}.json`)

export function openStatCache(home: string, repo: string, startMs: number): StatCache {
  const file = cacheFile(home, repo)
  let old: Rows = []
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: number; repo?: string; rows?: unknown }
    if (parsed.version === 3 && parsed.repo === repo && Array.isArray(parsed.rows) && parsed.rows.length % ROW === 0)
      old = parsed.rows as Rows
  } catch {} // none yet, or unreadable: every file is hashed, and the cache written anew
  // a flat list parses without an object per file; the index by path is the one structure built
  const at = new Map<string, number>()
  for (let i = 0; i < old.length; i += ROW) at.set(old[i] as string, i)
  const next: Rows = []
  let changed = false
  let kept = 0
  return {
    get(path, s) {
      const i = at.get(path)
      if (i === undefined) return undefined
      if (old[i + 2] !== s.ino || old[i + 3] !== s.size || old[i + 4] !== s.mtimeMs || old[i + 5] !== s.ctimeMs)
        return undefined
      if (old[i + 6] !== s.mode || old[i + 1] !== s.dev) return undefined
      for (let k = 0; k < ROW; k++) next.push(old[i + k]!)
      kept++
      return { oid: old[i + 7] as string, kind: old[i + 8] as BlobKind }
    },
    set(path, s, oid, kind) {
      if (Math.max(s.mtimeMs, s.ctimeMs) >= startMs - RACY_MS) return // racy: hashed again next time
      next.push(path, s.dev, s.ino, s.size, s.mtimeMs, s.ctimeMs, s.mode, oid, kind)
      changed = true
    },
    save() {
      if (!changed && kept === at.size) return
      writeFileAtomic(file, JSON.stringify({ version: 3, repo, rows: next }), 0o600, { durable: false })
    },
  }
}
