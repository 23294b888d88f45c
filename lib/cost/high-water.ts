// Money once counted is never forgotten: per coder session, the most the ledger ever counted for it, kept on the run
// (`coder_high_water`), by round window (named by its start: the run's start or a coder-done time, which never moves
// as later rounds open) and model. A transcript truncated, replaced or removed since still counts for that much.
import { isPairLoopError } from '../ground/errors.ts'
import { reviewerSessionIds } from '../run/run-queries.ts'
import type { HighWater, RunState } from '../run/state.ts'
import { updateRun } from '../run/store.ts'
import { CELL, type UsageSums } from './sums.ts'
import { context } from '../ground/context.ts'

/** Below this (USD) a difference is float noise between two ways of summing, not money. */
const NOISE = 1e-9

/** Each session's USD now, by window start and model: what its mark is held against. */
export function seenBySession(bySession: Map<string, UsageSums>, windowStarts: string[]): HighWater {
  const seen: HighWater = {}
  for (const [session, sums] of bySession) {
    const cells: HighWater[string] = {}
    sums.models.forEach((model, m) => {
      const data = sums.data[m]!
      for (let w = 0; w < sums.windows; w++) {
        const usd = data[w * CELL]!
        if (usd <= 0) continue
        const start = windowStarts[w]!
        cells[start] ??= {}
        cells[start][model] = (cells[start][model] ?? 0) + usd
      }
    })
    seen[session] = cells
  }
  return seen
}

export interface Shortfall {
  session: string
  window: string
  model: string
  usd: number
}

/** What the marks hold above what is seen now, per session, window and model (reviewer sessions aside). */
export function shortfalls(marks: HighWater | undefined, seen: HighWater, skip: Set<string>): Shortfall[] {
  const out: Shortfall[] = []
  for (const [session, windows] of Object.entries(marks ?? {})) {
    if (skip.has(session)) continue
    for (const [window, models] of Object.entries(windows)) {
      for (const [model, mark] of Object.entries(models)) {
        const usd = mark - (seen[session]?.[window]?.[model] ?? 0)
        if (usd > NOISE) out.push({ session, window, model, usd })
      }
    }
  }
  return out
}

/** The marks with `seen` taken in (the larger of each cell), reviewer sessions dropped; null when none rose. */
export function raiseMarks(marks: HighWater | undefined, seen: HighWater, skip: Set<string>): HighWater | null {
  const next: HighWater = structuredClone(marks ?? {})
  let changed = false
  for (const session of Object.keys(next)) {
    if (!skip.has(session)) continue
    delete next[session]
    changed = true
  }
  for (const [session, windows] of Object.entries(seen)) {
    if (skip.has(session)) continue
    for (const [window, models] of Object.entries(windows)) {
      for (const [model, usd] of Object.entries(models)) {
        const mark = next[session]?.[window]?.[model] ?? 0
        if (usd - mark <= NOISE) continue
        next[session] ??= {}
        next[session][window] ??= {}
        next[session][window][model] = usd
        changed = true
      }
    }
  }
  return changed ? next : null
}

/**
 * Keeps what the ledger saw (`seen`, from `Ledger.seen`) on the run, under its lock, merged with the marks written
 * since it was read; writes nothing when no mark rose (HANDOFF.md shows no cost: it is not rendered again). Never
 * fails the command: a mark not kept is said on stderr.
 *
 * `read` is the run as this command read it: when no mark of it would rise, none on disk would either (marks are only
 * ever raised, under the lock), so the lock is not taken at all; loading the lock's code alone is ~20 ms of a warm
 * budget-check. A reviewer session's marks that only a write would drop are skipped by `shortfalls` anyway.
 */
export async function rememberHighWater(read: RunState, seen: HighWater, home?: string): Promise<void> {
  const runId = read.run_id
  if (raiseMarks(read.coder_high_water, seen, reviewerSessionIds(read)) === null) return
  try {
    await updateRun(
      runId,
      (state: RunState) => {
        const raised = raiseMarks(state.coder_high_water, seen, reviewerSessionIds(state))
        return raised ? { state: { ...state, coder_high_water: raised }, result: undefined } : { result: undefined }
      },
      { home },
    )
  } catch (error) {
    if (!isPairLoopError(error)) throw error
    // held by another command: the marks are raised by the next one that gets the lock (this command's own write, if
    // it has one, meets the same lock and says so itself: one line)
    if (error.code === 'locked') return
    if (error.code === 'interrupted') throw error // the command was stopped while it waited: that, not a warning
    context().io.stderr(`pair-loop: warning: the spend seen could not be kept on run ${runId}: ${error.message}\n`)
  }
}
