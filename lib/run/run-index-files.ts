// The runs index on disk ($PAIR_LOOP_HOME/cache/runs-index/): a stamp saying which runs/ it describes, and one file per
// repository listing its runs. A cache: checked when read, rebuilt from the state files when it is missing or damaged.
import { lstatSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { context } from '../ground/context.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { cacheDir, RUN_ID_PATTERN } from '../ground/paths.ts'
import { PHASES } from './state.ts'

const Count = v.pipe(v.number(), v.integer(), v.minValue(0))

/** What the index holds of one state file: enough to pick a run, and the file's stat to see it changed. */
export const IndexEntry = v.object({
  repo: v.string(),
  /** null: the file could not be read (its repository known from the file's `repo` or an earlier index). */
  phase: v.nullable(v.picklist(PHASES)),
  created_at: v.nullable(v.string()),
  mtime_ms: v.number(),
  size: v.number(),
  ino: v.number(),
})
export type IndexEntry = v.InferOutput<typeof IndexEntry>

export const RepoRuns = v.object({ version: v.literal(1), runs: v.record(v.string(), IndexEntry) })
export type RepoRuns = v.InferOutput<typeof RepoRuns>

export const Stamp = v.object({
  version: v.literal(1),
  /** runs/'s mtime when its names were last seen to be these ('' when unknown: the next reader looks). */
  dir_mtime_ns: v.string(),
  /** When runs/ was last listed (ms since the epoch): absorbed writes are listed again after a while. */
  verified_at: v.number(),
  names: Count,
  digest: v.string(),
  /** How many runs each repository file lists: a file missing or cut short is seen. */
  repos: v.record(v.string(), Count),
  /** Runs whose killed writer left a temp file in runs/ (seen by the last listing): their next write sweeps it. */
  temps: v.optional(v.array(v.string()), []),
})
export type Stamp = v.InferOutput<typeof Stamp>

export const indexDir = (home: string) => join(cacheDir(home), 'runs-index')
export const stampPath = (home: string) => join(indexDir(home), 'stamp.json')
export const repoFilePath = (home: string, key: string) => join(indexDir(home), `repo-${key}.json`)

/** A stat that says a state file was rewritten: atomic writes change the inode, edits in place the mtime or size. */
export function fileStat(path: string): Pick<IndexEntry, 'mtime_ms' | 'size' | 'ino'> | null {
  try {
    const stat = lstatSync(path)
    return { mtime_ms: stat.isSymbolicLink() ? -1 : stat.mtimeMs, size: stat.size, ino: stat.ino }
  } catch {
    return null
  }
}

export const sameStat = (a: Pick<IndexEntry, 'mtime_ms' | 'size' | 'ino'>, b: typeof a) =>
  a.mtime_ms === b.mtime_ms && a.size === b.size && a.ino === b.ino

/** runs/'s mtime in nanoseconds (milliseconds where a runtime has no `mtimeNs`), or null when there is no runs/ yet. */
export function dirMtime(dir: string): string | null {
  let stat: import('node:fs').BigIntStats
  try {
    stat = statSync(dir, { bigint: true })
  } catch {
    return null
  }
  return String(stat.mtimeNs ?? stat.mtimeMs)
}

/** What one readdir of runs/ says: the run ids of the state files, and of those with a writer's temp file left. */
export interface Listing {
  ids: string[]
  temps: string[]
}

export function listRunsDir(dir: string): Listing {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return { ids: [], temps: [] }
  }
  const ids: string[] = []
  const temps = new Set<string>()
  for (const name of names) {
    if (name.length === 27 && name.endsWith('.json') && RUN_ID_PATTERN.test(name.slice(0, 22)))
      ids.push(name.slice(0, 22))
    else if (name.startsWith('.') && name.endsWith('.tmp') && RUN_ID_PATTERN.test(name.slice(1, 23)))
      temps.add(name.slice(1, 23))
  }
  return { ids, temps: [...temps] }
}

/** FNV-1a of a string, seeded: two of them summed over the names make an order-free digest of the set. */
function fnv(text: string, seed: number): number {
  let hash = seed
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619)
  return hash >>> 0
}

export function namesDigest(ids: Iterable<string>): string {
  let a = 0
  let b = 0
  for (const id of ids) {
    a = (a + fnv(id, 0x811c9dc5)) >>> 0
    b = (b + fnv(id, 0x050c5d1f)) >>> 0
  }
  return `${a.toString(16)}.${b.toString(16)}`
}

/** The digest with one name more (a run created), without listing runs/ again. */
export function digestWith(digest: string, id: string): string {
  const [a, b] = digest.split('.').map((part) => Number.parseInt(part, 16))
  return `${((a! + fnv(id, 0x811c9dc5)) >>> 0).toString(16)}.${((b! + fnv(id, 0x050c5d1f)) >>> 0).toString(16)}`
}

/** A repository's key: a hash of its path (no node:crypto on this path: status never loads it). */
export const repoKey = (repo: string) =>
  `${fnv(repo, 0x811c9dc5).toString(16).padStart(8, '0')}${fnv(repo, 0x050c5d1f).toString(16).padStart(8, '0')}`

function readJson<S extends v.GenericSchema>(schema: S, path: string): v.InferOutput<S> | null | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : null
  }
  try {
    const parsed = v.safeParse(schema, JSON.parse(text))
    return parsed.success ? parsed.output : null
  } catch {
    return null
  }
}

/** The stamp's text as read (a writer compares it to see whether anyone else changed it), or null. */
export function readStampText(home: string): string | null {
  try {
    return readFileSync(stampPath(home), 'utf8')
  } catch {
    return null
  }
}

export function parseStamp(text: string | null): Stamp | null {
  if (text === null) return null
  try {
    const parsed = v.safeParse(Stamp, JSON.parse(text))
    return parsed.success ? parsed.output : null
  } catch {
    return null
  }
}

/** A repository file: undefined when there is none, null when it is damaged. */
export const readRepoRuns = (home: string, key: string) => readJson(RepoRuns, repoFilePath(home, key))

export const stampText = (stamp: Stamp) => `${JSON.stringify(stamp)}\n`

/** Repository files first, the stamp last: a reader that sees the new stamp sees the files it counts. */
export function writeIndexFiles(home: string, repos: Map<string, RepoRuns>, stamp: Stamp): string {
  for (const [key, runs] of repos)
    writeFileAtomic(repoFilePath(home, key), `${JSON.stringify(runs)}\n`, 0o600, { durable: false })
  const text = stampText(stamp)
  writeFileAtomic(stampPath(home), text, 0o600, { durable: false })
  return text
}

/** The keys of the repository files in the index folder, whatever the stamp says. */
export function repoFileKeys(home: string): string[] {
  let names: string[]
  try {
    names = readdirSync(indexDir(home))
  } catch {
    return []
  }
  return names.flatMap((name) => /^repo-([0-9a-f]{16})\.json$/.exec(name)?.[1] ?? [])
}

/** Repository files of an earlier index that the new one does not have. */
export function removeRepoFilesBut(home: string, keep: Set<string>): void {
  for (const key of repoFileKeys(home)) {
    if (keep.has(key)) continue
    try {
      unlinkSync(repoFilePath(home, key))
    } catch {}
  }
}

/** The index's lock: a directory beside it. A writer holds it for milliseconds; one this old was left by a killed one. */
const LOCK_STALE_MS = 3_000

/** Take the index's lock if it is free now (or left by a killed holder); null: someone holds it. */
export function tryIndexLock(home: string): (() => void) | null {
  const lock = `${indexDir(home)}.lock`
  try {
    mkdirSync(cacheDir(home), { recursive: true })
  } catch {
    return null
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock)
      return () => {
        try {
          rmdirSync(lock)
        } catch {}
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return null
      try {
        if (context().now() - statSync(lock).mtimeMs < LOCK_STALE_MS) return null
        rmdirSync(lock)
      } catch {}
    }
  }
  return null
}

/** `work` under the index's lock, waiting up to `waitMs` for it; undefined when it stayed taken (a cache can wait). */
export async function withIndexLock<T>(home: string, work: () => T, waitMs = 1_000): Promise<T | undefined> {
  const deadline = context().now() + waitMs
  for (;;) {
    const release = tryIndexLock(home)
    if (release) {
      try {
        return work()
      } finally {
        release()
      }
    }
    if (context().now() >= deadline) return undefined
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20))
  }
}
