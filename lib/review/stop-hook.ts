// The agent's Stop hook (Claude Code, and Codex's hooks): while the repository here has an active run, an agent that
// ends its turn with work not handed over is sent back once, told the next command. Only `stop_hook_active: false`
// (the agent is not already continuing because of a Stop hook) can send it back, so the hook can never loop.
import { findTopLevelFast } from '../ground/git.ts'
import { changeNow } from '../snapshot/now.ts'
import { activeRunsOf, resolveRun } from '../run/run-access.ts'
import { inPrPhase, mergedAt, movedSinceApproval, nextStep, openFindings } from '../run/run-queries.ts'
import type { DiffStat, RunState } from '../run/state.ts'

export interface StopInput {
  cwd?: unknown
  stop_hook_active?: unknown
}

/** The working tree now: its change against the base, counted, and its snapshot's tree id (lib/snapshot/). */
export interface TreeNow {
  diff: DiffStat
  tree: string | null
}

/** Why the agent may not stop yet, with the command to run; null: let it stop. */
export function pendingWork(run: RunState, now: TreeNow): string | null {
  const how = `(run ${run.run_id}; \`pair-loop status\` shows where it stands). If you must stop to ask the person something, say so, then stop again.`
  // a review in flight (its worker goes on without the agent) still needs the agent back to read its verdict
  if (run.phase === 'reviewing' && run.review_claim)
    return `pair-loop: the review of this round is still running in its own worker, and its verdict is not read yet. Run \`pair-loop review\`: it attaches to that review (never a second reviewer call) and waits for the verdict; while it says \`in_progress: true\`, run it again ${how}`
  if (run.phase === 'reviewing')
    return `pair-loop: the round is handed over but not reviewed. Run \`pair-loop review\` now ${how}`
  const handOver = (since: string) =>
    `pair-loop: the working tree changed since ${since} (${now.diff.files} file(s), +${now.diff.insertions} -${now.diff.deletions} against the base) and the reviewer has not seen it. Hand the round over with \`pair-loop coder-done --summary-file -\`, then run \`pair-loop review\` ${how}`
  if (run.phase === 'approved') return movedSinceApproval(run, now.tree) ? handOver('the approving review') : null
  // the PR phase: a fix is a round like any, reviewed before it is pushed
  if (watchedPr(run))
    return movedSinceApproval(run, now.tree) ? handOver('the newest approved tree (the PR is open)') : null
  if (run.phase !== 'coding') return null
  if (nextStep(run) === 'reply')
    return `pair-loop: ${openFindings(run).length} finding(s) of the last review have no answer. Answer each with \`pair-loop reply --finding R.N --disposition fixed|wont-fix|question|ack --body-file -\`, then hand the round over with \`pair-loop coder-done --summary-file -\` ${how}`
  const last = run.rounds.at(-1)?.coder
  // byte for byte where the hand-over recorded its snapshot (a same-size edit counts); else by the counts
  if (last?.tree && now.tree) return last.tree === now.tree ? null : handOver(LAST_HANDOVER)
  const handed = last?.diff ?? zero
  const same = (['files', 'insertions', 'deletions'] as const).every((key) => now.diff[key] === handed[key])
  return same ? null : handOver(LAST_HANDOVER)
}

const LAST_HANDOVER = 'the last `coder-done`'

/** The hook's answer for the agent: `{decision: "block", reason}` to send it back, `{}` to let it stop. */
export async function stopHookAnswer(input: StopInput, fallbackCwd: string): Promise<Record<string, string>> {
  // only an agent that says it is not already continuing because of a Stop hook is sent back: never a loop
  if (input.stop_hook_active !== false) return {}
  try {
    const cwd = typeof input.cwd === 'string' && input.cwd ? input.cwd : fallbackCwd
    const top = findTopLevelFast(cwd)
    if (!top) return {}
    const active = activeRunsOf(top)
    if (active.length > 1) return {}
    const run = active[0] ?? resolveRun({ cwd: top }, { allowFinished: true }) // none active: the PR phase's run
    const looked = run.phase === 'coding' || run.phase === 'approved' || watchedPr(run)
    const now = looked ? await changeNow(run) : { diff: zero, tree: null }
    const reason = pendingWork(run, now)
    return reason ? { decision: 'block', reason } : {}
  } catch {
    return {} // a hook never keeps an agent from stopping because pair-loop could not read something
  }
}

/** A finished run whose PR is open and watched (not merged, not taken over): its fixes are rounds. */
const watchedPr = (run: RunState) => run.phase === 'finished' && inPrPhase(run) && mergedAt(run) === null

const zero: DiffStat = { files: 0, insertions: 0, deletions: 0 }
