// The environment that says where the agents keep their transcripts, frozen on the run at `start`: a later command
// run with another HOME, CLAUDE_CONFIG_DIR, CODEX_HOME or XDG_CONFIG_HOME still looks where the coder's CLI wrote.
import { resolve } from 'node:path'
import type { RunState, TranscriptEnv } from '../run/state.ts'
import { type Context, context, personHome, userHome } from '../ground/context.ts'
import { pairLoopHome } from '../ground/paths.ts'
import { AGENT_MODULES, agentHome } from '../agents/registry.ts'

export const TRANSCRIPT_ENV_KEYS = [
  'HOME',
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
  'GEMINI_CLI_HOME',
  'XDG_CONFIG_HOME',
] as const

/** Each variable as a CLI started from `env` would read it: absolute, HOME as the OS resolves it, null when unset. */
export function transcriptEnvNow(env: NodeJS.ProcessEnv = context().env): TranscriptEnv {
  const value = (key: (typeof TRANSCRIPT_ENV_KEYS)[number]) => (env[key] ? resolve(env[key]) : null)
  return {
    HOME: value('HOME') ?? userHome(env),
    CLAUDE_CONFIG_DIR: value('CLAUDE_CONFIG_DIR'),
    CODEX_HOME: value('CODEX_HOME'),
    GEMINI_CLI_HOME: value('GEMINI_CLI_HOME'),
    XDG_CONFIG_HOME: value('XDG_CONFIG_HOME'),
  }
}

/** Runs already told, by this command (its Context), that the current environment is not the one they started with. */
const toldBy = new WeakMap<Context, Set<string>>()

/**
 * `env` with the run's frozen transcript variables in place of its own (the run's start saw where the coder writes;
 * a command started with another HOME or CLAUDE_CONFIG_DIR must not look in an empty folder instead). When they
 * differ, says so once on stderr. A run started before the environment was frozen uses `env` as it is.
 */
export function transcriptEnvOf(
  run: Pick<RunState, 'run_id' | 'transcript_env'>,
  env: NodeJS.ProcessEnv = context().env,
  say: (text: string) => void = context().io.stderr,
): NodeJS.ProcessEnv {
  const frozen = run.transcript_env
  if (!frozen) return env
  const now = transcriptEnvNow(env)
  const differ = TRANSCRIPT_ENV_KEYS.filter((key) => now[key] !== frozen[key])
  const told = toldBy.get(context()) ?? new Set<string>()
  toldBy.set(context(), told)
  if (differ.length > 0 && !told.has(run.run_id)) {
    told.add(run.run_id)
    const show = (value: string | null) => value ?? '(unset)'
    const what = differ.map((key) => `${key} is ${show(now[key])} here, ${show(frozen[key])} at start`).join('; ')
    say(`pair-loop: note: run ${run.run_id} looks for transcripts where it started: ${what}; using the start's\n`)
  }
  const merged: NodeJS.ProcessEnv = { ...env }
  for (const key of TRANSCRIPT_ENV_KEYS) {
    const value = frozen[key]
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}

/** Where the coder's transcripts are read from: the person's folders, and the start's when it pointed elsewhere. */
export interface CoderLocation {
  env: NodeJS.ProcessEnv
  /** `person`: the person's config or default (their home); `start`: what the environment of `start` named instead. */
  location: 'person' | 'start'
  /** The coder CLI's folder there (CLAUDE_CONFIG_DIR or CODEX_HOME as the CLI resolves it). */
  dir: string
}

/**
 * The person's location (the coder vendor's config key: `claude_config_dir`, `codex_home`, …, else the person's home from the account database,
 * never the command's $HOME) first, then the start's frozen environment when its folder for the coder differs: the
 * coder sets the environment of `start`, so a folder it names can only add transcripts to count, never replace the
 * person's (an empty CLAUDE_CONFIG_DIR on start no longer hides the spend).
 */
export function coderLocations(
  run: Pick<RunState, 'run_id' | 'transcript_env' | 'coder' | 'config'>,
  env: NodeJS.ProcessEnv = context().env,
): CoderLocation[] {
  const dirOf = (of: NodeJS.ProcessEnv) => agentHome(run.coder, of)
  // a run from before the config was frozen on it keeps locating as it always did
  if (!run.config)
    return [{ env: transcriptEnvOf(run, env), location: 'person', dir: dirOf(transcriptEnvOf(run, env)) }]
  const pairLoop = run.config.pair_loop
  const person: NodeJS.ProcessEnv = { PAIR_LOOP_HOME: pairLoopHome(env), HOME: personHome() }
  for (const { home } of Object.values(AGENT_MODULES)) {
    const folder = pairLoop?.[home.key]
    if (folder) person[home.env] = folder
  }
  const started = transcriptEnvOf(run, env)
  const locations: CoderLocation[] = [{ env: person, location: 'person', dir: dirOf(person) }]
  if (resolve(dirOf(started)) !== resolve(dirOf(person)))
    locations.push({ env: started, location: 'start', dir: dirOf(started) })
  return locations
}
