// A config file the run started under that changed, appeared, went or broke since `start`. The run goes by the config
// frozen at its start whatever the files say now; every command on an unfinished run says so, once, on stderr.
import { join } from 'node:path'
import { shownPath } from './config-issues.ts'
import { readConfig, REPO_CONFIG_NAME } from './config.ts'
import { context } from '../ground/context.ts'
import { isPairLoopError } from '../ground/errors.ts'
import { configPath } from '../ground/paths.ts'
import type { RunState } from './state.ts'

export type DriftKind = 'changed' | 'added' | 'removed' | 'broken'

/** One config file that is not what the run started under: which, how, and the sentence for a person. */
export interface ConfigDrift {
  path: string
  drift: DriftKind
  message: string
}

/** The home's config.json and the repository's .pair-loop.json, each against the hash the run froze at start. */
export function configDrift(run: RunState, home = context().home): ConfigDrift[] {
  if (!run.config) return [] // a run started before runs froze their config reads it live: nothing to drift from
  const frozen = new Map(run.config.sources.map((source) => [source.path, source.sha256]))
  const drifts: ConfigDrift[] = []
  for (const path of [configPath(home), join(run.repo, REPO_CONFIG_NAME)]) {
    const then = frozen.get(path) ?? null
    let now: string | null
    try {
      now = readConfig(path)?.sha256 ?? null
    } catch (error) {
      if (!isPairLoopError(error)) throw error
      drifts.push({ path, drift: 'broken', message: brokenMessage(run, error.message) })
      continue
    }
    if (now === then) continue
    const drift: DriftKind = then === null ? 'added' : now === null ? 'removed' : 'changed'
    drifts.push({ path, drift, message: driftMessage(run, path, drift) })
  }
  return drifts
}

const WORDS: Record<Exclude<DriftKind, 'broken'>, string> = {
  changed: 'changed',
  added: 'was written',
  removed: 'was removed',
}

function driftMessage(run: RunState, path: string, drift: Exclude<DriftKind, 'broken'>): string {
  return `${shownPath(path)} ${WORDS[drift]} since run ${run.run_id} started; the run goes on with the config frozen at its start (the next \`pair-loop start\` reads the file as it is now)`
}

function brokenMessage(run: RunState, problem: string): string {
  return `${problem}; run ${run.run_id} goes on with the config frozen at its start, but the next \`pair-loop start\` refuses the file until it is fixed`
}

/** Commands that already said it: once per command (its Context), however often it resolves the run. */
const warned = new WeakMap<object, Set<string>>()

/** Say each drift of an unfinished run once on stderr: a finished run goes on with nothing, so it is not said there. */
export function warnConfigDrift(run: RunState, home = context().home): void {
  if (run.phase === 'finished') return
  const ctx = context()
  const said = warned.get(ctx) ?? new Set<string>()
  warned.set(ctx, said)
  for (const { path, message } of configDrift(run, home)) {
    if (said.has(`${run.run_id}:${path}`)) continue
    said.add(`${run.run_id}:${path}`)
    ctx.io.stderr(`pair-loop: warning: ${message}\n`)
  }
}
