// Which reviewer runs and how: a vendor's CLI (its module in lib/agents/) or a custom command, with the person's
// fallback list after it. Each runs on its read-only copy, loading no instructions, settings or hooks from the repository.
import { askReviewerUnavailable } from '../run/ask.ts'
import { accessSync, constants } from 'node:fs'
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path'
import type { Config } from '../run/config.ts'
import { fail } from '../ground/errors.ts'
import { pairLoopHome, runArtifactsDir } from '../ground/paths.ts'
import type { ReviewerKind, RunState } from '../run/state.ts'
import { type ReviewerTool, VENDORS, type Vendor } from '../run/vendors.ts'
import { AGENT_MODULES, agentOf } from '../agents/registry.ts'
import type { ReviewerCall } from '../agents/types.ts'
import { reviewerEnv } from './reviewer-env.ts'
import { BUILTIN_PREFIX, builtinReviewer, builtinReviewerNames } from './builtin.ts'
import { cliFlags } from './capabilities.ts'
import { inTreePaths, type PinOptions, pinnedCommand } from './trusted-programs.ts'
import { context, tempRoot } from '../ground/context.ts'

export interface ReviewerChoice {
  tool: ReviewerTool
  /** What reviews: a vendor's CLI, a custom command, or a stub shipped with pair-loop. */
  kind: ReviewerKind
  /** The program that runs (absolute path where one was found). */
  program: string | null
  /** Its environment, built from the allow-list and the person's config (lib/review/reviewer-env.ts). */
  env: NodeJS.ProcessEnv
  fallback_used: boolean
  /** The model asked for (config `reviewer_model`), when it applies to this reviewer; a fallback uses its own default. */
  model: string | null
  /** The final answer is constrained to ANSWER_SCHEMA (the CLI has the flag); else the text grammar alone. */
  structured: boolean
  /** pair-loop names the session before the call (`--session-id`). */
  namesSession: boolean
  /** The CLI stops itself at what the run has left (`claude -p --max-budget-usd`). */
  spendCap: boolean
  /** It can continue its session of the last round (Continuity). */
  resumes: boolean
  /** What it reports for a continued session is the session's running total (the call's own: minus the last total). */
  reportsSessionTotal: boolean
  /** A named session's transcript while it is written, for the review watch (null: none to follow). */
  transcriptOf: (sessionId: string) => string | null
  /** The session the first lines of its output name, before the call ends (null: none there). */
  sessionInHead: (head: string) => string | null
  /** Where the reviewer runs: outside the repository (claude when it can read it from there with --add-dir, and a
   * configured command); a --reviewer-cmd in the repository, where the person asked for it. */
  cwd: string
  /** Variables taken out of the reviewer's environment (they would load the repository's instructions). */
  unsetEnv: string[]
  /** Its read-only copy of the snapshot, and the file names left out of it (those its CLI loads as instructions). */
  copy: { dir: string; hidden: string[] }
  /** The prompt as it goes on the reviewer's stdin. */
  input: (prompt: string) => string
  argv: (call: ReviewerCall) => string[]
}

export function findExecutable(
  bin: string,
  env: NodeJS.ProcessEnv = context().env,
  cwd = context().cwd,
): string | null {
  const candidates = bin.includes('/')
    ? [isAbsolute(bin) ? bin : resolve(cwd, bin)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, bin))
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return null
}

/**
 * An empty folder outside the repository for claude and codex to run in, so neither loads the repository's
 * CLAUDE.md, AGENTS.md, .claude/ or .codex/ (instructions, settings, hooks): the run's own folder, or a temp one.
 */
export function reviewerWorkdir(run: RunState, env: NodeJS.ProcessEnv = context().env): string {
  const outside = (dir: string) => {
    const path = relative(run.repo, dir)
    return path.startsWith('..') || isAbsolute(path)
  }
  const own = join(runArtifactsDir(run.run_id, pairLoopHome(env)), 'reviewer-cwd')
  return outside(own) ? own : join(tempRoot(), `pair-loop-reviewer-${run.run_id}`)
}

/**
 * The reviewer's read-only copy of the snapshot it reviews (lib/snapshot/copy.ts), under the run's artifacts: every
 * flag that names the repository names this, never the live working tree the coder writes while the review runs. A
 * vendor whose copy leaves files out (`hiddenFor`) has a copy of its own.
 */
export function reviewerCopyDir(
  run: Pick<RunState, 'run_id'>,
  env: NodeJS.ProcessEnv = context().env,
  hiddenFor: Vendor | null = null,
): string {
  return join(runArtifactsDir(run.run_id, pairLoopHome(env)), `reviewed-snapshot${hiddenFor ? `-${hiddenFor}` : ''}`)
}

/** The choice for one vendor's CLI at `path`, with the flags its help lists. */
function cliChoice(
  run: RunState,
  tool: Vendor,
  path: string,
  fallback_used: boolean,
  model: string | null,
  env: NodeJS.ProcessEnv,
  config: Pick<Config, 'pair_loop'>,
  ownCopy = false,
): ReviewerChoice {
  const agent = agentOf(tool)
  const built = reviewerEnv(env, config, path)
  // asked with the variables it always gets (gemini: no relaunch, half the time) and the help cache's home
  const flags = cliFlags(tool, path, { ...built, ...agent.reviewer.env, PAIR_LOOP_HOME: pairLoopHome(env) })
  const hidden = [...agent.reviewer.contextFiles(built)]
  // a panel's members run at once: each writes a copy of its own
  const copy = reviewerCopyDir(run, env, hidden.length || ownCopy ? tool : null)
  const cwd = agent.reviewer.readsCopyFromOutside(flags) ? reviewerWorkdir(run, env) : copy
  const places = { copy, cwd, model, flags }
  return {
    tool,
    kind: 'vendor',
    program: path,
    env: { ...built, ...agent.reviewer.env },
    fallback_used,
    model,
    structured: agent.reviewer.structured(flags),
    namesSession: agent.reviewer.namesSession(flags),
    spendCap: agent.reviewer.spendCap(flags),
    resumes: agent.reviewer.resumes(flags),
    reportsSessionTotal: agent.reviewer.reportsSessionTotal,
    transcriptOf: (sessionId) => agent.reviewer.transcriptOf(cwd, sessionId, built),
    sessionInHead: agent.reviewer.sessionInHead,
    cwd,
    unsetEnv: [...agent.reviewer.unsetEnv],
    copy: { dir: copy, hidden },
    input: agent.reviewer.stdin,
    argv: (call) => agent.reviewer.argv(path, call, places),
  }
}

/** A custom command wins; else the run's reviewer, else the other vendor's CLI (`fallback_used`); else `reviewer_unavailable`. */
export function chooseReviewer(
  run: RunState,
  config: Config,
  reviewerCmd: string[] | null,
  env: NodeJS.ProcessEnv = context().env,
): ReviewerChoice {
  const custom = reviewerCmd ?? config.pair_loop.reviewer_cmd
  const program = custom && customProgram(custom, env, config, run.repo)
  // a command that does not exist will not appear on a retry: unavailable, not a failed (retryable) review
  if (custom && !program)
    fail(
      'reviewer_unavailable',
      `the reviewer command ${JSON.stringify(custom[0])} does not exist or is not executable${custom[0]!.includes('/') ? '' : ` on the reviewer's PATH (${reviewerEnv(env, config, null).PATH}): name it by its absolute path, or set pair_loop.reviewer_env.PATH`}`,
      {
        command: custom,
      },
    )
  if (custom && program) {
    // a configured command runs only the in-tree bytes the person trusted; either runs in the reviewer's copy
    const builtin = reviewerCmd !== null && isBuiltin(reviewerCmd)
    const argv = reviewerCmd ? custom : pinnedCommand(custom, program, pinOptions(run, 'pair_loop.reviewer_cmd', env))
    return {
      tool: 'custom',
      kind: builtin ? 'builtin' : 'custom',
      program: builtin ? custom[1]! : program, // a stub is named by its script, not by sh
      env: reviewerEnv(env, config, program),
      fallback_used: false,
      model: config.pair_loop.reviewer_model,
      structured: false,
      namesSession: false,
      spendCap: false,
      resumes: false,
      reportsSessionTotal: false,
      transcriptOf: () => null,
      sessionInHead: anySessionInHead, // a command may print a vendor's format
      cwd: reviewerCopyDir(run, env),
      unsetEnv: [],
      copy: { dir: reviewerCopyDir(run, env), hidden: [] },
      input: (prompt) => prompt,
      argv: () => argv,
    }
  }
  const tried: string[] = []
  for (const [index, tool] of candidates(run, config).entries()) {
    const bin = agentOf(tool).bin(config.pair_loop)
    tried.push(bin)
    const path = programOf(run, tool, bin, env)
    // reviewer_model names a model of the configured reviewer's vendor: a fallback uses its own default
    const model = index > 0 ? null : config.pair_loop.reviewer_model
    // pinned before its --help is read: an in-tree binary runs only as the person trusted it
    const pinned = path && pinnedCommand([path], path, pinOptions(run, `pair_loop.${tool}_bin`, env))[0]!
    if (pinned) return cliChoice(run, tool, pinned, index > 0, model, env, config)
  }
  fail(
    'reviewer_unavailable',
    `no reviewer CLI to run: ${tried.join(', ')} ${tried.length > 1 ? 'were' : 'was'} neither found at start nor set as a path in your config, and no reviewer command is set (run \`pair-loop setup\`, set pair_loop.${run.reviewer}_bin, or list other vendors in pair_loop.reviewers_fallback)`,
    { tried, next: 'ask-user', ask: askReviewerUnavailable() },
  )
}

/**
 * One member of a panel: that vendor's CLI as the run recorded it, on a copy of its own (members run at once); no
 * fallback (the panel is the person's list), a missing one is `reviewer_unavailable`.
 */
export function chooseMember(
  run: RunState,
  config: Config,
  tool: Vendor,
  env: NodeJS.ProcessEnv = context().env,
): ReviewerChoice {
  const bin = agentOf(tool).bin(config.pair_loop)
  const path = programOf(run, tool, bin, env)
  const pinned = path && pinnedCommand([path], path, pinOptions(run, `pair_loop.${tool}_bin`, env))[0]!
  // reviewer_model names a model of the run's reviewer's vendor: the other members use their own default
  const model = tool === run.reviewer ? config.pair_loop.reviewer_model : null
  if (pinned) return cliChoice(run, tool, pinned, false, model, env, config, true)
  return fail(
    'reviewer_unavailable',
    `the panel's ${tool} reviewer (${bin}) was neither found at start nor set as a path in your config (set pair_loop.${tool}_bin, or take it out of pair_loop.reviewers)`,
    { tried: [bin], key: 'pair_loop.reviewers', next: 'ask-user', ask: askReviewerUnavailable() },
  )
}

/**
 * The run's reviewer, then the person's `reviewers_fallback` in order (a run frozen before the key: the other of the
 * two vendors it knew), never the coder's own vendor unless the person allows it.
 */
function candidates(run: RunState, config: Config): Vendor[] {
  const { reviewers_fallback, allow_same_vendor } = config.pair_loop
  // a run frozen before the key knew two vendors, and fell back to the other one
  const fallback = reviewers_fallback ?? VENDORS.slice(0, 2).filter((tool) => tool !== run.reviewer)
  const others = fallback.filter((tool) => tool !== run.reviewer && (allow_same_vendor || tool !== run.coder))
  return [run.reviewer, ...new Set(others)]
}

/**
 * The vendor's program as the run recorded it at start (the person's config, or start's PATH lookup), when it is still
 * executable; never looked up on the PATH of the command that asks. A run from before start recorded them looks up as
 * it always did.
 */
function programOf(run: RunState, tool: Vendor, bin: string, env: NodeJS.ProcessEnv): string | null {
  if (!run.reviewer_programs) return findExecutable(bin, env, run.repo)
  const recorded = run.reviewer_programs[tool]
  if (!recorded) return null
  try {
    accessSync(recorded.path, constants.X_OK)
    return recorded.path
  } catch {
    return null
  }
}

/** The session any vendor's first lines of output name. */
const anySessionInHead = (head: string): string | null => {
  for (const agent of Object.values(AGENT_MODULES)) {
    const session = agent.reviewer.sessionInHead(head)
    if (session) return session
  }
  return null
}

/** A custom command's program: a bare name is looked up on the reviewer's built PATH, never the caller's. */
function customProgram(
  command: string[],
  env: NodeJS.ProcessEnv,
  config: Pick<Config, 'pair_loop'>,
  repo: string,
): string | null {
  return findExecutable(command[0]!, { PATH: reviewerEnv(env, config, null).PATH }, repo)
}

/** `--reviewer-cmd builtin:NAME`, as parseReviewerCmd made it: `sh <package>/fixtures/reviewers/NAME.sh`. */
function isBuiltin(command: string[]): boolean {
  const names = builtinReviewerNames()
  return (
    command.length === 2 &&
    command[0] === 'sh' &&
    names.some((name) => command[1] === builtinReviewer(`${BUILTIN_PREFIX}${name}`)[1])
  )
}

const pinOptions = (run: RunState, key: string, env: NodeJS.ProcessEnv): PinOptions => ({
  repo: run.repo,
  home: pairLoopHome(env),
  copies: join(runArtifactsDir(run.run_id, pairLoopHome(env)), 'trusted-programs'),
  key,
})

/** The in-tree files the config's commands name (custom command, CLI binaries), for `pair-loop trust` to record. */
export function configuredInTree(config: Pick<Config, 'pair_loop'>, repo: string, env = context().env): string[] {
  const { reviewer_cmd } = config.pair_loop
  const bins = Object.values(AGENT_MODULES).map((agent) => [agent.bin(config.pair_loop)])
  const commands = [...(reviewer_cmd ? [reviewer_cmd] : []), ...bins]
  return [
    ...new Set(
      commands.flatMap((command) => {
        const program =
          command === reviewer_cmd ? customProgram(command, env, config, repo) : findExecutable(command[0]!, env, repo)
        return program ? inTreePaths(command, program, repo) : []
      }),
    ),
  ]
}

/** `--reviewer-cmd '["sh","review.sh"]'`: a JSON array of strings, or `builtin:NAME` (a stub shipped in the package), or `usage`. */
export function parseReviewerCmd(value: string | undefined): string[] | null {
  if (value === undefined) return null
  if (value.startsWith(BUILTIN_PREFIX)) return builtinReviewer(value)
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {}
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((part) => typeof part === 'string' && part.length > 0)
  ) {
    fail(
      'usage',
      `--reviewer-cmd must be a JSON array of strings, e.g. '["sh","review.sh"]', or builtin:NAME (builtin:approve, builtin:changes, …), got ${JSON.stringify(value)}`,
      { flag: '--reviewer-cmd' },
    )
  }
  return parsed as string[]
}
