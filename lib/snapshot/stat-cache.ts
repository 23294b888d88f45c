// pair-loop's own stat cache: a file whose device, inode, size, mode, mtime and ctime are those it had when it was
// hashed is not hashed again. It lives under $PAIR_LOOP_HOME (git's index, the usual stat cache, is the coder's to
// write). ctime cannot be set back by a user, and an entry is kept only for a file last changed well before the
// snapshot began (a "racy" entry, changed in the same instant, is hashed again next time, as git does).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hexDigest } from '../digest.ts'
import { writeFileAtomic } from '../fsutil.ts'

/** Timestamps this close to the snapshot's start may not yet show a write in the same instant (coarse clocks). */
const RACY_NS = 2_000_000_000n

export interface StatCache {
  get(path: string, key: string): string | undefined
  set(path: string, key: string, oid: string, changedNs: bigint): void
  save(): void
}

const cacheFile = (home: string, repo: string) => join(home, 'cache', 'snapshot', `${hexDigest(repo).slice(0, 24)}.json`)

export function openStatCache(home: string, repo: string, startNs: bigint): StatCache {
  const file = cacheFile(home, repo)
  let old: Record<string, [string, string]> = {}
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: number; repo?: string; entries?: unknown }
    if (parsed.version === 1 && parsed.repo === repo && parsed.entries && typeof parsed.entries === 'object')
      old = parsed.entries as Record<string, [string, string]>
  } catch {} // none yet, or unreadable: every file is hashed, and the cache written anew
  const next: Record<string, [string, string]> = {}
  let dirty = false
  let kept = 0
  return {
    get(path, key) {
      const entry = old[path]
      if (!Array.isArray(entry) || entry[0] !== key || typeof entry[1] !== 'string') return undefined
      next[path] = entry
      kept++
      return entry[1]
    },
    set(path, key, oid, changedNs) {
      if (changedNs >= startNs - RACY_NS) return // racy: hashed again next time
      next[path] = [key, oid]
      dirty = true
    },
    save() {
      if (!dirty && kept === Object.keys(old).length) return
      writeFileAtomic(file, JSON.stringify({ version: 1, repo, entries: next }), 0o600, { durable: false })
    },
  }
}
