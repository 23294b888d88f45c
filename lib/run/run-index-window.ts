// The write side of the runs index: every write of a state file enters the run in the index under the index's lock,
// and a short write that found the index current leaves it current (its own changes to runs/ taken in, not listed).
import { context } from '../ground/context.ts'
import { runsDir } from '../ground/paths.ts'
import {
  digestWith,
  dirMtime,
  fileStat,
  type IndexEntry,
  parseStamp,
  type RepoRuns,
  readRepoRuns,
  readStampText,
  repoKey,
  type Stamp,
  withIndexLock,
  writeIndexFiles,
} from './run-index-files.ts'
import type { RunState } from './state.ts'

/** runs/ is listed again this long after it was last listed, whatever the writes in between took in. */
export const RELIST_MS = 15 * 60_000
/** A write that took longer (waiting on a lock) may have overlapped someone else's change: runs/ is listed again. */
const SHORT_WRITE_MS = 1_000

/** A stretch of this process's own changes to runs/ (nested: a start's lock around the run's creation). */
interface Window {
  depth: number
  /** The stamp as it stood when the window opened, updated as the window writes it. */
  text: string | null
  /** runs/ matched the stamp when the window opened (or was listed since) and nobody else has written the stamp. */
  current: boolean
  at: number
}
const open = new Map<string, Window>()

/** Whether the stamp still describes runs/ (same mtime, listed recently). */
export function stampCurrent(stamp: Stamp | null, mtime: string | null, now = context().now()): boolean {
  return stamp !== null && mtime !== null && stamp.dir_mtime_ns === mtime && now - stamp.verified_at < RELIST_MS
}

/**
 * Inside one of this process's own short windows that began on a current index, runs/ has changed only by this
 * process's writes (the lock directories, a state file renamed over): the index still describes it.
 */
export function currentInWindow(home: string, text: string | null): boolean {
  const window = open.get(home)
  const now = context().now()
  return Boolean(window?.current && text !== null && text === window.text && now - window.at < SHORT_WRITE_MS)
}

/** A reader listed runs/ and wrote the stamp: an open window starts again from there. */
export function listedInWindow(home: string, text: string): void {
  const window = open.get(home)
  if (window) Object.assign(window, { text, current: true, at: context().now() })
}

export interface WindowTools {
  /** Called right after a state file is written, under the run's lock: the run's entry, with the file's stat. */
  note: (state: RunState, path: string) => void
  /** Whether runs/ must be swept for a killed writer's temp files of this run before writing it. */
  sweep: (runId: string) => boolean
}
interface Noted {
  state: RunState
  stat: ReturnType<typeof fileStat>
}

/**
 * Run `work` (which changes runs/) as a window: each state it writes is noted and entered in the index under the
 * index's lock; a run about to be created is entered before its file exists, so no stamp taken meanwhile misses it.
 * The index is a cache: failing to update it never fails the write (the next reader sees the index stale).
 */
export async function withRunsWindow<T>(
  home: string,
  work: (tools: WindowTools) => Promise<T>,
  { creating }: { creating?: RunState } = {},
): Promise<T> {
  let window = open.get(home)
  if (!window) {
    const text = readStampText(home)
    const at = context().now()
    window = { depth: 0, text, current: stampCurrent(parseStamp(text), dirMtime(runsDir(home))), at }
    open.set(home, window)
  }
  window.depth++
  const noted: Noted[] = []
  const tools: WindowTools = {
    note: (state, path) => noted.push({ state, stat: fileStat(path) }),
    // a killed writer's temp file changed runs/ behind the index, or the last listing saw one of this run
    sweep: (runId) => !(window.current && !parseStamp(window.text)?.temps.includes(runId)),
  }
  try {
    if (creating) await settle(home, window, [{ state: creating, stat: null }])
    return await work(tools)
  } finally {
    await settle(home, window, noted)
    if (--window.depth === 0) open.delete(home)
  }
}

async function settle(home: string, window: Window, noted: Noted[]): Promise<void> {
  try {
    const done = await withIndexLock(home, () => enter(home, window, noted))
    if (done === undefined) window.current = false // not entered: the next reader lists runs/ and finds the run
  } catch {
    window.current = false
  }
}

function enter(home: string, window: Window, noted: Noted[]): true {
  const text = readStampText(home)
  const stamp = parseStamp(text)
  const files = new Map<string, RepoRuns>()
  for (const { state, stat } of noted) {
    const key = repoKey(state.repo)
    const file = stamp && (files.get(key) ?? repoFileOf(home, key, stamp))
    // no index yet, or a damaged repository file: the next reader rebuilds it from runs/
    if (!stamp || !file) {
      window.current = false
      return true
    }
    if (!file.runs[state.run_id]) {
      stamp.names++
      stamp.digest = digestWith(stamp.digest, state.run_id)
      stamp.repos[key] = (stamp.repos[key] ?? 0) + 1
    }
    if (stat) stamp.temps = stamp.temps.filter((id) => id !== state.run_id) // its write swept them
    files.set(key, { ...file, runs: { ...file.runs, [state.run_id]: entryOf(state, stat) } })
  }
  const short = context().now() - window.at < SHORT_WRITE_MS
  const ours = stamp !== null && window.current && text === window.text && short
  if (ours) stamp.dir_mtime_ns = dirMtime(runsDir(home)) ?? ''
  if (stamp && (files.size > 0 || ours)) {
    const written = writeIndexFiles(home, files, stamp)
    if (ours) window.text = written
  }
  if (!ours) window.current = false
  return true
}

/** The repository file as the stamp counts it; null when it is damaged or missing while the stamp counts runs in it. */
function repoFileOf(home: string, key: string, stamp: Stamp): RepoRuns | null {
  const file = readRepoRuns(home, key)
  if (file === undefined) return stamp.repos[key] ? null : { version: 1, runs: {} }
  return file && Object.keys(file.runs).length === (stamp.repos[key] ?? 0) ? file : null
}

/** A run's entry; a run not yet on disk gets a stat no file has, so a reader reads the file before trusting it. */
const entryOf = (state: RunState, stat: Noted['stat']): IndexEntry => ({
  repo: state.repo,
  phase: state.phase,
  created_at: state.created_at,
  ...(stat ?? { mtime_ms: -2, size: -1, ino: -1 }),
})
