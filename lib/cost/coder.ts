// The coder's spend for the ledger: which sessions are the coder's, their transcripts read (incrementally) and
// summed into the run's round windows, and each file as a source (read, skipped lines, unfinished last line).
import { reviewerSessionIds } from '../run-queries.ts'
import type { RunState } from '../state.ts'
import { scanClaude, sumClaude, sumClaudeFile } from './claude.ts'
import { scanCodex, sumCodex, sumCodexFile } from './codex.ts'
import type { Source } from './ledger-types.ts'
import { claudeSessionFiles, claudeSessions, codexRolloutForThread, codexSessions } from './locate.ts'
import type { PriceBook } from './pricing.ts'
import { type PartialSums, UsageSums, sumsKey } from './sums.ts'
import type { ScanResult } from './transcript-cache.ts'

/**
 * The coder's sessions: those recorded at each coder-done, plus its newest session for the repository (the one
 * in progress) when it was written since the run started. Reviewer sessions are never counted as the coder's.
 */
export function coderSessionIds(run: RunState, env: NodeJS.ProcessEnv = process.env): string[] {
  const reviewerIds = reviewerSessionIds(run)
  const ids: string[] = []
  for (const round of run.rounds) {
    const id = round.coder.session_id
    if (id && !ids.includes(id) && !reviewerIds.has(id)) ids.push(id)
  }
  const since = Date.parse(run.created_at)
  const candidates = run.coder === 'claude' ? claudeSessions(run.repo, env) : codexSessions(run.repo, env, { since })
  const newest = candidates.find((s) => !reviewerIds.has(s.id) && s.mtimeMs >= since)
  if (newest && !ids.includes(newest.id)) ids.push(newest.id)
  return ids
}

/** A transcript to read for a session, or the source saying why there is none. */
type Planned = { session: string; path: string } | Source

/**
 * The coder's usage per round window (`bounds`: the run's start, each coder-done, the finish or Infinity), with a
 * source per file (pushed to `sources`). When one file holds all of it, its cache keeps the sums too, so a check
 * adds only the responses written since the last one.
 */
export function sumCoder(
  run: RunState,
  env: NodeJS.ProcessEnv,
  prices: PriceBook,
  cache: string | null,
  sources: Source[],
  bounds: number[],
): UsageSums {
  let sums = new UsageSums(bounds)
  const ids = coderSessionIds(run, env)
  if (ids.length === 0) {
    sources.push({
      role: 'coder',
      kind: run.coder,
      session: null,
      path: null,
      status: 'missing',
      why: `no ${run.coder} session recorded for this run or written in ${run.repo} since it started`,
    })
    return sums
  }
  const kind = run.coder
  const plan = kind === 'claude' ? planClaude(run, ids, env) : planCodex(ids, env)
  const files = plan.filter((item): item is { session: string; path: string } => !('role' in item))
  const key = sumsKey(bounds, prices.key)
  // one file: its cache keeps the sums; several: they are summed together (Claude de-duplicates across them)
  const keepSums =
    files.length === 1
      ? (scan: ScanResult, saved: PartialSums | null) => {
          const summed =
            kind === 'claude'
              ? sumClaudeFile(scan, prices, bounds, key, saved)
              : sumCodexFile(scan, prices, bounds, key, saved)
          sums = summed.sums
          return summed.keep
        }
      : undefined
  const scans: ScanResult[] = []
  for (const item of plan) {
    if ('role' in item) {
      sources.push(item)
      continue
    }
    const scan = kind === 'claude' ? scanClaude(item.path, cache, keepSums) : scanCodex(item.path, cache, env, keepSums)
    sources.push(fileSource(kind, item.session, scan))
    scans.push(scan)
  }
  if (keepSums) return sums
  if (kind === 'claude') sumClaude(scans, prices, sums)
  else for (const scan of scans) sumCodex(scan, prices, sums)
  return sums
}

/** Each session's main transcript and its subagents' transcripts, in that order. */
function planClaude(run: RunState, ids: string[], env: NodeJS.ProcessEnv): Planned[] {
  return ids.flatMap((id): Planned[] => {
    const files = claudeSessionFiles(id, { repo: run.repo, env })
    if (!files.main) {
      const why = `no transcript ${id}.jsonl under ${files.looked_in}`
      return [{ role: 'coder', kind: 'claude', session: id, path: null, status: 'missing', why }]
    }
    return [files.main, ...files.subagents].map((path) => ({ session: id, path }))
  })
}

/** Each session's rollout. */
function planCodex(ids: string[], env: NodeJS.ProcessEnv): Planned[] {
  return ids.map((id): Planned => {
    const path = codexRolloutForThread(id, env)
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
