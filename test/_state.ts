// A run state made by code, as `start` makes it (lib/run/transitions.ts newRun), for tests that need one without a process.
import type { RunState } from '../lib/run/state.ts'
import { newRun } from '../lib/run/transitions.ts'

/** A fresh run in `coding` with nothing recorded; `over` replaces any field. */
export function runState(over: Partial<RunState> = {}): RunState {
  const now = over.created_at ?? '2026-11-30T05:00:00.000Z'
  return {
    ...newRun({
      run_id: '20261130-051500-a1b2c3',
      task: 'demo task',
      repo: '/tmp/nowhere',
      branch: 'main',
      base_sha: 'a'.repeat(40),
      base_branch: null,
      coder: 'claude',
      reviewer: 'codex',
      max_rounds: 3,
      budget_usd: null,
      config: null,
      now,
    }),
    ...over,
  }
}
