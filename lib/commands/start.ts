// start: open a run in the repository around the working directory, on a clean tree, and record where the work begins.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type Config, loadConfig, REPO_CONFIG_NAME } from '../run/config.ts'
import { VENDORS, type Vendor } from '../run/vendors.ts'
import { CODER_READERS } from '../cost/coder-readers.ts'
import { blobAtBase } from '../run/config-base.ts'
import type { Context } from '../ground/context.ts'
import { transcriptEnvNow } from '../cost/transcript-env.ts'
import { hexDigest } from '../ground/digest.ts'
import { fail } from '../ground/errors.ts'
import { currentBranch, dirtyPaths, excludeFile, excludeIn, HANDOFF_NAME, plainGit, topLevel } from '../ground/git.ts'
import { reviewBase } from '../ground/review-base.ts'
import { type GitHubRepo, pinGitHubRepo } from '../ground/github-repo.ts'
import { withLock } from '../ground/lock.ts'
import { checkHomeOutside, newRunId, runStatePath, runsDir } from '../ground/paths.ts'
import { activeRunsOf, foreignHandoff, handoffPath, outsideHandoffPath, writeHandoff } from '../run/run-access.ts'
import { withRunsWindow } from '../run/run-index-window.ts'
import { nextFields } from '../run/run-queries.ts'
import type { Agent } from '../run/state.ts'
import { createRun, ensureRunsDir } from '../run/store.ts'
import { stripControl } from '../ground/text.ts'
import { newRun } from '../run/transitions.ts'
import { checkBlockOnFlag, checkBudgetFlag, checkVendors } from '../run/authority.ts'
import type { Severity } from '../run/severity-gate.ts'
import { reviewerSource } from '../run/reviewer-identity.ts'
import { resolvePrograms } from '../review/programs.ts'

export interface StartOptions {
  /** What the coder is to do: a paragraph at most (the script checks its size). */
  task: string
  coder?: Agent
  reviewer?: Agent
  maxRounds?: number
  budgetUsd?: number
  /** The run's severity gate, at most the config's `pair_loop.block_on` (a flag only tightens it). */
  blockOn?: Severity
  /** The PR's base branch or commit (default: the default branch). */
  base?: string
  cwd?: string
}

export async function run(ctx: Context, options: StartOptions) {
  const repo = await topLevel(options.cwd ?? ctx.cwd)
  checkHomeOutside(repo, ctx.home)
  // the base first: the repository's config is honoured by itself only as git tracks it there
  const base = await reviewBase(repo, options.base ?? null)
  const config = await configAtBase(repo, base.sha)
  await checkCleanTree(repo)
  return openRun(ctx, options, {
    repo,
    base,
    config,
    branch: await currentBranch(repo),
    excludeFile: await excludeFile(repo),
    github: await pinGitHubRepo(repo, { rev: options.base ?? null, branch: base.branch }),
    handoffTracked: await isTracked(repo, HANDOFF_NAME),
  })
}

/** The path is in git's index (a file, or a folder with files), whatever the exclude file says. */
async function isTracked(repo: string, path: string): Promise<boolean> {
  return (await plainGit(repo, ['ls-files', '-z', '--', path])).length > 0
}

/** The transcript rendered beside the run's state from the first write on (run-access.ts handoffPath). */
function keepHandoffOutside(runId: string, home: string): void {
  const path = outsideHandoffPath(runId, home)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, '')
}

/** Where start opens a run: what it asked git of the repository, and the config it read at the base. */
export interface RunPlace {
  /** The top level, real path. */
  repo: string
  base: { sha: string; branch: string | null }
  config: Config
  /** The checked-out branch, or `HEAD` when detached. */
  branch: string
  /** The repository's own exclude file, where HANDOFF.md is kept out of git. */
  excludeFile: string
  /** The GitHub repository of the remote the base branch tracks, pinned for every gh call of the run (null: none). */
  github: GitHubRepo | null
  /** git tracks a HANDOFF.md (file or folder) at the top: the run's transcript is rendered elsewhere. */
  handoffTracked?: boolean
}

/** The config as start reads it: the person's own, and the repository's as git tracks it at the base. */
export async function configAtBase(repo: string, baseSha: string): Promise<Config> {
  const tracked = existsSync(join(repo, REPO_CONFIG_NAME)) ? await blobAtBase(repo, baseSha, REPO_CONFIG_NAME) : null
  return loadConfig({ repo, baseBlob: tracked })
}

/** A coder whose transcripts pair-loop cannot read would run uncounted under the budget: refused. */
function checkCoderCounted(coder: Vendor): void {
  if (CODER_READERS[coder]) return
  fail('usage', `pair-loop cannot count a ${coder} coder's spend yet: start with another --coder`, {
    flag: '--coder',
    coder,
  })
}

/** The run opened at `place` (a clean tree) once no other run holds the repository: start's document. */
export async function openRun(ctx: Context, options: StartOptions, place: RunPlace) {
  const { repo } = place
  checkBlockOnFlag(options.blockOn, place.config)
  // the run's effective config: a tighter gate from the flag is what the run goes by, frozen with the rest
  const config = options.blockOn
    ? { ...place.config, pair_loop: { ...place.config.pair_loop, block_on: options.blockOn } }
    : place.config
  const coder = options.coder ?? config.pair_loop.coder
  // a coder that names itself (--coder, or the MCP client's handshake) is reviewed by another vendor (the person's
  // fallback list first) when the person's reviewer is its own: the person's rule against a same-vendor pair holds without asking the coder
  const reviewer =
    options.reviewer ??
    (options.coder !== undefined && config.pair_loop.reviewer === coder && !config.pair_loop.allow_same_vendor
      ? ([...(config.pair_loop.reviewers_fallback ?? []), ...VENDORS].find((vendor) => vendor !== coder) ?? coder)
      : config.pair_loop.reviewer)
  checkBudgetFlag(options.budgetUsd, config)
  checkVendors(coder, reviewer, options.coder !== undefined || options.reviewer !== undefined, config)
  checkCoderCounted(coder)
  checkNoActiveRun(repo, ctx.home)
  if (!place.handoffTracked) checkNoForeignHandoff(repo)

  const state = newRun({
    run_id: newRunId(new Date(ctx.now())),
    task: stripControl(options.task).trim(),
    repo,
    branch: place.branch,
    base_sha: place.base.sha,
    base_branch: place.base.branch,
    coder,
    reviewer,
    max_rounds: options.maxRounds ?? config.pair_loop.max_rounds,
    budget_usd: options.budgetUsd ?? config.budget.per_run_usd,
    config,
    // the programs are the person's (config) or found now, once: a review never looks on its caller's PATH
    reviewer_programs: resolvePrograms(config, ctx.env, repo),
    now: new Date(ctx.now()).toISOString(),
  })
  state.github = place.github
  state.transcript_env = transcriptEnvNow(ctx.env) // later commands look for the coder's transcripts where this one would
  // check and create under one lock per repository: two starts at once must not both open a run
  ensureRunsDir(ctx.home)
  // the lock's own directory in runs/ is taken into the runs index with the run (lib/run/run-index-window.ts)
  await withRunsWindow(ctx.home, () =>
    withLock(join(runsDir(ctx.home), `.start-${hexDigest(repo).slice(0, 16)}`), async () => {
      checkNoActiveRun(repo, ctx.home)
      excludeIn(place.excludeFile)
      excludeIn(place.excludeFile, '.HANDOFF.md.*.tmp') // its atomic write's temp file (lib/ground/fsutil.ts)
      // the repository's own HANDOFF.md is the change's to ship: the transcript goes beside the run's state instead
      if (place.handoffTracked) keepHandoffOutside(state.run_id, ctx.home)
      await createRun(state, { home: ctx.home, afterWrite: (next) => writeHandoff(next, ctx.home) })
    }),
  )
  const { pruneHomeDaily } = await import('../cost/prune.ts') // caches do not grow for good
  pruneHomeDaily(ctx.home)
  return {
    run_id: state.run_id,
    state_path: runStatePath(state.run_id, ctx.home),
    handoff_path: handoffPath(state),
    base_sha: state.base_sha,
    branch: state.branch,
    coder: state.coder,
    reviewer: state.reviewer,
    reviewer_source: reviewerSource(state),
    reviewer_program: state.reviewer_programs?.[state.reviewer]?.path ?? null,
    max_rounds: state.max_rounds,
    budget_usd: state.budget_usd,
    ...nextFields(state),
  }
}

async function checkCleanTree(repo: string): Promise<void> {
  const dirty = await dirtyPaths(repo)
  if (dirty.length > 0)
    fail('dirty_tree', `${repo} has uncommitted changes; commit or stash them first`, {
      repo,
      paths: dirty.slice(0, 100),
      count: dirty.length,
    })
}

/** No run of the repository is active (an unreadable one fails: it may be active). */
function checkNoActiveRun(repo: string, home: string): void {
  const active = activeRunsOf(repo, home).map((run) => run.run_id)
  if (active.length > 0)
    fail('run_active', `run ${active[0]} is still active in ${repo}; finish it first`, { repo, run_id: active[0] })
}

/** A HANDOFF.md no run wrote is the person's: start would overwrite it. */
function checkNoForeignHandoff(repo: string): void {
  const theirs = foreignHandoff(repo)
  if (theirs)
    fail(
      'dirty_tree',
      `${theirs} exists and no pair-loop run wrote it; move or rename it first (start would overwrite it)`,
      { repo, paths: [HANDOFF_NAME], count: 1 },
    )
}
