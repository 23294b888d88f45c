// The agent's Stop hook (Claude Code, and Codex's hooks): while the repository here has an active run, an agent that
// ends its turn with work not handed over is sent back once, told the next command. Only `stop_hook_active: false`
// (the agent is not already continuing because of a Stop hook) can send it back, so the hook can never loop.
import { diffStat, findTopLevelFast } from './git.ts'
import { runsOfRepo } from './run-access.ts'
import { isActive, nextStep, openFindings } from './run-queries.ts'
import type { DiffStat, RunState } from './state.ts'

export interface StopInput {
  cwd?: unknown
  stop_hook_active?: unknown
}

/** Why the agent may not stop yet, with the command to run; null: let it stop. */
export function pendingWork(run: RunState, now: DiffStat): string | null {
  const how = `(run ${run.run_id}; \`pair-loop status\` shows where it stands). If you must stop to ask the person something, say so, then stop again.`
  if (run.phase === 'reviewing' && !run.review_claim)
    return `pair-loop: the round is handed over but not reviewed. Run \`pair-loop review\` now ${how}`
  if (run.phase !== 'coding') return null
  if (nextStep(run) === 'reply')
    return `pair-loop: ${openFindings(run).length} finding(s) of the last review have no answer. Answer each with \`pair-loop reply --finding R.N --disposition fixed|wont-fix|question|ack --body-file -\`, then hand the round over with \`pair-loop coder-done --summary-file -\` ${how}`
  const handed = run.rounds.at(-1)?.coder.diff ?? { files: 0, insertions: 0, deletions: 0 }
  const same = now.files === handed.files && now.insertions === handed.insertions && now.deletions === handed.deletions
  if (same) return null
  return `pair-loop: the working tree changed since the last \`coder-done\` (${now.files} file(s), +${now.insertions} -${now.deletions} against the base) and the reviewer has not seen it. Hand the round over with \`pair-loop coder-done --summary-file -\`, then run \`pair-loop review\` ${how}`
}

/** The hook's answer for the agent: `{decision: "block", reason}` to send it back, `{}` to let it stop. */
export async function stopHookAnswer(input: StopInput, fallbackCwd: string): Promise<Record<string, string>> {
  // only an agent that says it is not already continuing because of a Stop hook is sent back: never a loop
  if (input.stop_hook_active !== false) return {}
  try {
    const cwd = typeof input.cwd === 'string' && input.cwd ? input.cwd : fallbackCwd
    const top = findTopLevelFast(cwd)
    if (!top) return {}
    const active = runsOfRepo(top).filter(isActive)
    if (active.length !== 1) return {}
    const run = active[0]!
    const reason = pendingWork(run, run.phase === 'coding' ? await diffStat(run.repo, run.base_sha) : zero)
    return reason ? { decision: 'block', reason } : {}
  } catch {
    return {} // a hook never keeps an agent from stopping because pair-loop could not read something
  }
}

const zero: DiffStat = { files: 0, insertions: 0, deletions: 0 }
