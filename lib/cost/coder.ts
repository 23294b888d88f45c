// The coder's spend for the ledger: which sessions are the coder's, their transcripts read (incrementally) and
// summed into the run's round windows, and each file as a source (read, skipped lines, unfinished last line).
import { reviewerSessionIds } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import { scanClaude, sumClaude, sumClaudeFile } from './claude.ts'
import { scanCodex, sumCodex, sumCodexFile } from './codex.ts'
import type { Source } from './ledger-types.ts'
import { claudeSessionFiles, codexRolloutForThread, subagentFiles } from './locate.ts'
import type { PriceBook } from './pricing.ts'
import { claudeSessions, codexSessions } from './sessions.ts'
import { type PartialSums, UsageSums, sumsKey } from './sums.ts'
import type { ScanResult } from './transcript-cache.ts'
import { context } from '../ground/context.ts'
import type { CoderLocation } from './transcript-env.ts'

/** A coder session, and its main transcript when the search that found it saw it. */
interface CoderSession {
  id: string
  path: string | null
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
  const found =
    run.coder === 'claude' ? claudeSessions(run.repo, env, { since }) : codexSessions(run.repo, env, { since })
  for (const session of found) add(session.id, session.path)
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
  const sessions =
    run.coder === 'claude' ? claudeSessions(run.repo, env, { since }) : codexSessions(run.repo, env, { since })
  const reviewerIds = reviewerSessionIds(run)
  return sessions.find((session) => !reviewerIds.has(session.id))?.id ?? null
}

/** A transcript to read for a session, or the source saying why there is none. */
type Planned = { session: string; path: string; location?: 'start'; why?: string } | Source
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
      const summed =
        kind === 'claude'
          ? sumClaudeFile(scan, prices, bounds, key, saved)
          : sumCodexFile(scan, prices, bounds, key, saved)
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
    const scan = kind === 'claude' ? scanClaude(item.path, cache, hook) : scanCodex(item.path, cache, env, hook)
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
    if (!bySession.has(session)) bySession.set(session, sumAll(kind, its, prices, bounds))
  const sums = files.length === 1 ? bySession.get(files[0]!.session)! : sumAll(kind, scans, prices, bounds)
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
    const plan = run.coder === 'claude' ? planClaude(run, sessions, env) : planCodex(sessions, env)
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
  `the environment of start pointed the coder's transcripts at ${run.coder === 'claude' ? 'CLAUDE_CONFIG_DIR' : 'CODEX_HOME'} ${dir}, not your ${locations[0]!.dir}: both are counted`

/** Several transcripts summed together (Claude's de-duplicated across them). */
function sumAll(kind: 'claude' | 'codex', scans: ScanResult[], prices: PriceBook, bounds: number[]): UsageSums {
  const sums = new UsageSums(bounds)
  if (kind === 'claude') sumClaude(scans, prices, sums)
  else for (const scan of scans) sumCodex(scan, prices, sums)
  return sums
}

/** Each session's main transcript and its subagents' transcripts, in that order. */
function planClaude(run: RunState, sessions: CoderSession[], env: NodeJS.ProcessEnv): Planned[] {
  return sessions.flatMap(({ id, path }): Planned[] => {
    const files = path
      ? { main: path, subagents: subagentFiles(path), looked_in: '' }
      : claudeSessionFiles(id, { repo: run.repo, env })
    if (!files.main) {
      const why = `no transcript ${id}.jsonl under ${files.looked_in}`
      return [{ role: 'coder', kind: 'claude', session: id, path: null, status: 'missing', why }]
    }
    return [files.main, ...files.subagents].map((path) => ({ session: id, path }))
  })
}

/** Each session's rollout. */
function planCodex(sessions: CoderSession[], env: NodeJS.ProcessEnv): Planned[] {
  return sessions.map(({ id, path: found }): Planned => {
    const path = found ?? codexRolloutForThread(id, env)
    if (path) return { session: id, path }
    const why = `no rollout-*-${id}.jsonl under ${env.CODEX_HOME || '~/.codex'}/sessions or archived_sessions`
    return { role: 'coder', kind: 'codex', session: id, path: null, status: 'missing', why }
  })
}

function fileSource(kind: 'claude' | 'codex', session: string, scan: ScanResult): Source {
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
