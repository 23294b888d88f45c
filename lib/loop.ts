// The loop's rules: which run a command means, which phase it needs, and what the agent should run next.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from './errors.ts'
import { writeFileAtomic } from './fsutil.ts'
import { HANDOFF_NAME, findTopLevelFast } from './git.ts'
import { renderHandoff } from './handoff.ts'
import { checkRunId, pairLoopHome } from './paths.ts'
import type { Finding, Phase, RunState } from './state.ts'
import { listRuns, readRun, updateRun } from './store.ts'

export type NextStep = 'coder-done' | 'review' | 'reply' | 'finish' | 'ask-user' | null

export const isActive = (run: RunState) => run.phase !== 'finished'

export function lastReview(run: RunState) {
  return run.rounds.at(-1)?.reviewer ?? null
}

/** Findings of the latest review that have no reply yet. */
export function openFindings(run: RunState): Finding[] {
  return (lastReview(run)?.findings ?? []).filter((finding) => !run.replies[finding.id])
}

export function allFindings(run: RunState): Finding[] {
  return run.rounds.flatMap((round) => round.reviewer?.findings ?? [])
}

export function nextStep(run: RunState): NextStep {
  switch (run.phase) {
    case 'coding':
      return openFindings(run).length > 0 ? 'reply' : 'coder-done'
    case 'reviewing':
      return 'review'
    case 'approved':
      return 'finish'
    case 'capped':
      return 'ask-user'
    case 'finished':
      return null
  }
}

export const roundsLeft = (run: RunState) => Math.max(0, run.max_rounds - run.rounds.length)

/** The round being worked on: in `coding` it is the next one, otherwise the latest. */
export const currentRound = (run: RunState) =>
  run.phase === 'coding' ? run.rounds.length + 1 : Math.max(1, run.rounds.length)

export function expectPhase(run: RunState, allowed: Phase[], command: string): void {
  if (allowed.includes(run.phase)) return
  const next = nextStep(run)
  fail(
    'wrong_phase',
    `${command} needs phase ${allowed.join(' or ')}, but run ${run.run_id} is ${run.phase}${next ? `; run \`${next}\` next` : ''}`,
    {
      run_id: run.run_id,
      phase: run.phase,
      expected_phase: allowed,
      next,
    },
  )
}

/** A repository's runs, newest first; an unreadable one of it is an error, never skipped as if it did not exist. */
export function runsOfRepo(repo: string, home = pairLoopHome()): RunState[] {
  const listed = listRuns(home)
  const damaged = listed.find((entry) => 'error' in entry && entry.repo === repo)
  if (damaged && 'error' in damaged) throw damaged.error
  return listed.flatMap((entry) => ('state' in entry && entry.state.repo === repo ? [entry.state] : []))
}

/** `--run` if given, else the one active run whose repository is the one around `cwd`. */
export function resolveRun(
  { run, cwd }: { run?: string; cwd?: string },
  { allowFinished = false, home = pairLoopHome() } = {},
): RunState {
  if (run !== undefined) return readRun(checkRunId(run), home)
  const dir = cwd ?? process.cwd()
  const top = findTopLevelFast(dir)
  if (!top) fail('run_not_found', `${dir} is not inside a git repository, and no --run was given`, { cwd: dir })
  const runs = runsOfRepo(top, home)
  const here = runs.filter(isActive)
  // finish, status and friends may look back at the newest finished run when none is active
  if (here.length === 0 && allowFinished && runs[0]) return runs[0]
  if (here.length === 0)
    fail('run_not_found', `no active run in ${top}; start one with \`pair-loop start --task ...\` or pass --run`, {
      repo: top,
    })
  if (here.length > 1)
    fail('usage', `${here.length} active runs in ${top}; pass --run`, { repo: top, run_ids: here.map((r) => r.run_id) })
  return here[0]!
}

export const handoffPath = (run: Pick<RunState, 'repo'>) => join(run.repo, HANDOFF_NAME)

/** HANDOFF.md follows state on every write; a repository that vanished doesn't fail the state change. */
export function writeHandoff(run: RunState): void {
  if (!existsSync(run.repo)) return
  try {
    writeFileAtomic(handoffPath(run), renderHandoff(run), 0o644)
  } catch (error) {
    process.stderr.write(`pair-loop: warning: could not write ${handoffPath(run)}: ${(error as Error).message}\n`)
  }
}

/** Change a run under its lock and re-render HANDOFF.md from what was written. */
export function changeRun<T>(
  id: string,
  mutate: Parameters<typeof updateRun<T>>[1],
  home = pairLoopHome(),
): Promise<T> {
  return updateRun(id, mutate, { home, afterWrite: writeHandoff })
}

export const nowIso = () => new Date().toISOString()
