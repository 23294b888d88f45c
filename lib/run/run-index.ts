// A repository's runs without reading everyone's: the runs index (lib/run/run-index-files.ts) checked against runs/ (its
// mtime; a readdir when that moved) and against each of the repository's state files (a stat each), rebuilt from the
// state files when it is missing, stale or damaged. The state files stay the truth: callers check what they read.
import { context } from '../ground/context.ts'
import { runStatePath, runsDir } from '../ground/paths.ts'
import { PairLoopError } from '../ground/errors.ts'
import {
  dirMtime,
  fileStat,
  type IndexEntry,
  namesDigest,
  parseStamp,
  type RepoRuns,
  readRepoRuns,
  readStampText,
  removeRepoFilesBut,
  repoFileKeys,
  repoKey,
  type Stamp,
  sameStat,
  listRunsDir,
  tryIndexLock,
  stampText,
  writeIndexFiles,
} from './run-index-files.ts'
import { currentInWindow, listedInWindow, stampCurrent } from './run-index-window.ts'
import type { Phase } from './state.ts'
import { readRun, repoHint } from './store.ts'

/** A run as the index has it; `phase` null: its state file cannot be read (it is `state_malformed`). */
export interface IndexedRun {
  run_id: string
  phase: Phase | null
  created_at: string | null
}

/** A stat no file has: the run was entered just before its state file was written. */
const BEING_CREATED = -2

/**
 * The runs of `repo` as the index lists them, each checked by a stat of its state file (one that changed is read
 * again). `rebuild`: read every state file first (a caller found a file that disagrees with the index).
 */
export function indexedRunsOf(repo: string, home: string, { rebuild = false } = {}): IndexedRun[] {
  if (dirMtime(runsDir(home)) === null) return [] // no run at all yet: nothing to index, nothing written
  const key = repoKey(repo)
  if (!rebuild) {
    const stamp = currentStamp(home)
    const file = stamp && repoFileOf(home, key, stamp)
    const runs = file && checked(file, repo, home, false)
    if (runs) return runs
  }
  return checked(rebuildRunIndex(home).get(key) ?? { version: 1, runs: {} }, repo, home, true) ?? []
}

/** The stamp, if it still describes runs/ (after listing runs/ when its mtime moved); null: rebuild. */
function currentStamp(home: string): Stamp | null {
  const text = readStampText(home)
  const stamp = parseStamp(text)
  if (!stamp) return null
  if (currentInWindow(home, text) || stampCurrent(stamp, dirMtime(runsDir(home)))) return stamp
  const dir = runsDir(home)
  const before = dirMtime(dir)
  const { ids, temps } = listRunsDir(dir)
  const after = dirMtime(dir)
  if (ids.length !== stamp.names || namesDigest(ids) !== stamp.digest) return null
  const mtime = before !== null && before === after ? before : ''
  const listed: Stamp = { ...stamp, dir_mtime_ns: mtime, verified_at: context().now(), temps }
  // only over the stamp it listed against: a writer that entered a run meanwhile is not undone
  withIndexLockNow(home, () => {
    if (readStampText(home) !== text) return false
    listedInWindow(home, writeIndexFiles(home, new Map(), listed))
    return true
  })
  return listed
}

/** The repository's file as the stamp counts it (read twice when it disagrees: a writer may be between the two). */
function repoFileOf(home: string, key: string, stamp: Stamp): RepoRuns | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    const counted = attempt === 0 ? stamp : parseStamp(readStampText(home))
    const file = readRepoRuns(home, key)
    const want = counted?.repos[key] ?? 0
    if (file === undefined && want === 0) return { version: 1, runs: {} }
    if (file && Object.keys(file.runs).length === want) return file
  }
  return null
}

/**
 * The file's runs of `repo`, each state file's stat compared with the index (a changed one read again, a damaged one
 * kept as this repository's). null when the index is stale: a file gone, or now another repository's.
 */
function checked(file: RepoRuns, repo: string, home: string, lenient: boolean): IndexedRun[] | null {
  const runs: IndexedRun[] = []
  for (const [run_id, entry] of Object.entries(file.runs)) {
    if (entry.repo !== repo) continue // another repository whose key is the same
    const stat = fileStat(runStatePath(run_id, home))
    if (stat && sameStat(stat, entry)) {
      runs.push({ run_id, phase: entry.phase, created_at: entry.created_at })
      continue
    }
    if (!stat && (lenient || entry.mtime_ms === BEING_CREATED)) continue
    const now = stat && readEntry(run_id, home, repo)
    if (now && now.repo === repo) runs.push({ run_id, phase: now.phase, created_at: now.created_at })
    else if (!lenient) return null
  }
  return runs
}

/** A state file's entry (read and schema-checked); a damaged one keeps the repository its file or `known` names. */
function readEntry(run_id: string, home: string, known: string | undefined): IndexEntry | null {
  const stat = fileStat(runStatePath(run_id, home))
  if (!stat) return null
  try {
    const state = readRun(run_id, home)
    return { repo: state.repo, phase: state.phase, created_at: state.created_at, ...stat }
  } catch (error) {
    if (!(error instanceof PairLoopError)) throw error
    if (error.code === 'run_not_found') return null
    const repo = repoHint(runStatePath(run_id, home)) ?? known
    return repo === undefined ? null : { repo, phase: null, created_at: null, ...stat }
  }
}

/** Every state file read (as `status --all` reads them) into a new index, written if its lock is free now. */
export function rebuildRunIndex(home: string): Map<string, RepoRuns> {
  const dir = runsDir(home)
  const replacing = readStampText(home)
  const before = dirMtime(dir)
  const { ids, temps } = listRunsDir(dir)
  const earlier = earlierRepos(home)
  const files = new Map<string, RepoRuns>()
  const repos: Record<string, number> = {}
  for (const run_id of ids) {
    const entry = readEntry(run_id, home, earlier.get(run_id))
    if (!entry) continue // damaged beyond telling whose it is: no repository's run
    const key = repoKey(entry.repo)
    const file = files.get(key) ?? { version: 1, runs: {} }
    file.runs[run_id] = entry
    files.set(key, file)
    repos[key] = (repos[key] ?? 0) + 1
  }
  const after = dirMtime(dir)
  const mtime = before !== null && before === after ? before : ''
  const stamp: Stamp = {
    version: 1,
    dir_mtime_ns: mtime,
    verified_at: context().now(),
    names: ids.length,
    digest: namesDigest(ids),
    repos,
    temps,
  }
  withIndexLockNow(home, () => {
    if (readStampText(home) !== replacing) return false // written meanwhile (a run entered): that index is newer
    writeIndexFiles(home, files, stamp)
    removeRepoFilesBut(home, new Set(files.keys()))
    listedInWindow(home, stampText(stamp))
    return true
  })
  return files
}

/** Whose each run was by the index being replaced: a state file damaged since still counts as its repository's. */
function earlierRepos(home: string): Map<string, string> {
  const repos = new Map<string, string>()
  for (const key of repoFileKeys(home)) {
    for (const [run_id, entry] of Object.entries(readRepoRuns(home, key)?.runs ?? {})) repos.set(run_id, entry.repo)
  }
  return repos
}

/** Write the index under its lock if nobody holds it now (a reader never waits for a cache); true when it wrote. */
function withIndexLockNow(home: string, write: () => boolean): boolean {
  const release = tryIndexLock(home)
  if (!release) return false
  try {
    return write()
  } catch {
    return false // a cache that cannot be written now is rebuilt next time
  } finally {
    release()
  }
}
