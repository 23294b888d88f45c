// The coder's spend for the ledger: which sessions are the coder's, their transcripts read (incrementally) and
// summed into the run's round windows, and each file as a source (read, skipped lines, unfinished last line).
import { reviewerSessionIds } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import type { Vendor } from '../run/vendors.ts'
import { CODER_READERS, type CoderReader, type CoderSession, type Planned } from './coder-readers.ts'
import type { Source } from './ledger-types.ts'
import type { PriceBook } from './pricing.ts'
import { agentOf } from '../agents/registry.ts'
import { fail } from '../ground/errors.ts'
import { type PartialSums, UsageSums, sumsKey } from './sums.ts'
import type { ScanResult } from './transcript-cache.ts'
import { context } from '../ground/context.ts'
import type { CoderLocation } from './transcript-env.ts'

/** The coder's transcript reader; a coder whose transcripts cannot be read never got past `start`. */
function readerOf(run: Pick<RunState, 'coder'>): CoderReader {
  return CODER_READERS[run.coder] ?? fail('internal', `the ${run.coder} coder's transcripts cannot be read`)
}

/** Files changed this long before the run's start are still looked at (file times lag the clock by a tick or so). */
const START_SLACK_MS = 5_000

/**
 * The coder's sessions: those recorded at each coder-done, then every session of its CLI in the repository's
 * transcript folders (the top level's and any folder's below it) changed since the run started, newest first. A
 * cheap session started just before a command must not hide the costly one. Reviewer sessions are never the coder's.
 */
export function coderSessions(run: RunState, env: NodeJS.ProcessEnv = context().env): CoderSession[] {
  const reviewerIds = reviewerSessionIds(run)
  const sessions: CoderSession[] = []
  const add = (id: string | null, path: string | null) => {
    if (!id || reviewerIds.has(id)) return
    const known = sessions.find((s) => s.id === id)
    if (!known) sessions.push({ id, path })
    else known.path ??= path
  }
  for (const round of run.rounds) add(round.coder.session_id, null)
  const since = Date.parse(run.created_at) - START_SLACK_MS
  for (const session of readerOf(run).sessions(run.repo, env, { since })) add(session.id, session.path)
  return sessions
}

export const coderSessionIds = (run: RunState, env: NodeJS.ProcessEnv = context().env) =>
  coderSessions(run, env).map((session) => session.id)

/**
 * The coder's session now (coder-done without --session-id): the newest transcript of its CLI for the repository that
 * changed in the run's window and that no reviewer ran under. A session that ended before the run began is not it.
 */
export function currentCoderSession(run: RunState, env: NodeJS.ProcessEnv = context().env): string | null {
  const since = Date.parse(run.created_at) - START_SLACK_MS
  const sessions = readerOf(run).sessions(run.repo, env, { since })
  const reviewerIds = reviewerSessionIds(run)
  return sessions.find((session) => !reviewerIds.has(session.id))?.id ?? null
}

const isFile = (item: Planned): item is { session: string; path: string } => !('role' in item)

/** The coder's usage: all its sessions de-duplicated together, and each session's own (its high-water mark's). */
export interface CoderSums {
  sums: UsageSums
  bySession: Map<string, UsageSums>
}

/**
 * The coder's usage per round window (`bounds`: the run's start, each coder-done, the finish or Infinity), with a
 * source per file (pushed to `sources`). A session held in one file keeps its sums in that file's cache, so a check
 * adds only the responses written since the last one.
 */
export function sumCoder(
  run: RunState,
  locations: CoderLocation[],
  prices: PriceBook,
  cache: string | null,
  sources: Source[],
  bounds: number[],
): CoderSums {
  const bySession = new Map<string, UsageSums>()
  const env = locations[0]!.env
  const kind = run.coder
  const reader = readerOf(run)
  const plan = planAcross(run, locations)
  for (const { dir } of locations.slice(1))
    sources.push({
      role: 'coder',
      kind: run.coder,
      session: null,
      path: dir,
      status: 'read',
      location: 'start',
      why: startWhy(run, dir, locations),
    })
  if (plan.length === 0) {
    sources.push({
      role: 'coder',
      kind: run.coder,
      session: null,
      path: null,
      status: 'missing',
      why: `no ${run.coder} session recorded for this run or written in ${run.repo} (or a folder below it) since it started`,
    })
    return { sums: new UsageSums(bounds), bySession }
  }
  const files = plan.filter(isFile)
  const filesOf = (session: string) => files.filter((file) => file.session === session).length
  const key = sumsKey(bounds, prices.key)
  // a session in one file: its cache keeps the session's sums
  const keepSums =
    (session: string) =>
    (scan: ScanResult, saved: PartialSums | null): PartialSums => {
      const summed = reader.sumFile(scan, prices, bounds, key, saved)
      bySession.set(session, summed.sums)
      return summed.keep
    }
  const scans: ScanResult[] = []
  const scansOf = new Map<string, ScanResult[]>()
  for (const item of plan) {
    if (!isFile(item)) {
      sources.push(item)
      continue
    }
    const hook = filesOf(item.session) === 1 ? keepSums(item.session) : undefined
    const scan = reader.scan(item.path, cache, env, hook)
    const source = fileSource(kind, item.session, scan)
    if (item.location) {
      source.location = item.location
      source.why = [item.why, source.why].filter(Boolean).join('; ')
    }
    sources.push(source)
    scans.push(scan)
    scansOf.set(item.session, [...(scansOf.get(item.session) ?? []), scan])
  }
  // a session in several files (subagents), or one its hook never saw (unreadable): summed here
  for (const [session, its] of scansOf)
    if (!bySession.has(session)) bySession.set(session, sumAll(reader, its, prices, bounds))
  const sums = files.length === 1 ? bySession.get(files[0]!.session)! : sumAll(reader, scans, prices, bounds)
  return { sums, bySession }
}

/**
 * Every location's plan, as one: a session's files found in any location (each file once), or one missing source
 * when no location has them. A file found only where the start's environment pointed says so.
 */
function planAcross(run: RunState, locations: CoderLocation[]): Planned[] {
  const bySession = new Map<string, { files: Planned[]; missing: Planned | null }>()
  const seen = new Set<string>()
  for (const { env, location, dir } of locations) {
    const sessions = coderSessions(run, env)
    const plan = readerOf(run).plan(run, sessions, env)
    for (const item of plan) {
      const session = item.session ?? ''
      const entry = bySession.get(session) ?? { files: [], missing: null }
      bySession.set(session, entry)
      if (!isFile(item)) entry.missing ??= item
      else if (!seen.has(item.path)) {
        seen.add(item.path)
        entry.files.push(location === 'person' ? item : { ...item, location, why: startWhy(run, dir, locations) })
      }
    }
  }
  return [...bySession.values()].flatMap((entry) =>
    entry.files.length ? entry.files : entry.missing ? [entry.missing] : [],
  )
}

/** Why a transcript outside the person's folder is counted: the environment of `start` pointed there. */
const startWhy = (run: RunState, dir: string, locations: CoderLocation[]) =>
  `the environment of start pointed the coder's transcripts at ${agentOf(run.coder).home.env} ${dir}, not your ${locations[0]!.dir}: both are counted`

/** Several transcripts summed together (Claude's de-duplicated across them). */
function sumAll(reader: CoderReader, scans: ScanResult[], prices: PriceBook, bounds: number[]): UsageSums {
  const sums = new UsageSums(bounds)
  reader.sumAll(scans, prices, sums)
  return sums
}

function fileSource(kind: Vendor, session: string, scan: ScanResult): Source {
  const source: Source = { role: 'coder', kind, session, path: scan.path, status: scan.status }
  if (scan.why) source.why = scan.why
  if (scan.status === 'read') {
    Object.assign(source, {
      bytes: scan.offset,
      pending_bytes: scan.pending_bytes,
      read_bytes: scan.read_bytes,
      lines: scan.lines,
      entries: scan.count,
    })
    if (scan.skipped.length) {
      source.skipped = scan.skipped
      source.why = scan.skipped
        .map((s) => `${s.count} line${s.count === 1 ? '' : 's'} skipped: ${s.reason} (first at line ${s.first_line})`)
        .join('; ')
    }
    if (scan.pending_bytes > 0)
      source.why = [source.why, `last line unfinished (${scan.pending_bytes} bytes), not counted yet`]
        .filter(Boolean)
        .join('; ')
  }
  return source
}
