#!/usr/bin/env node
// start: open a run on a clean tree and record where the work begins.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { decimalFlag, defineScript, integerFlag, isMain, main } from '../lib/cli.ts'
import { AGENTS, loadConfig, REPO_CONFIG_NAME } from '../lib/config.ts'
import { blobAtBase } from '../lib/config-base.ts'
import { fail } from '../lib/errors.ts'
import { stripControl } from '../lib/text.ts'
import { hexDigest } from '../lib/digest.ts'
import { currentBranch, dirtyPaths, ensureExcluded, HANDOFF_NAME, reviewBase, topLevel } from '../lib/git.ts'
import { activeRunsOf, foreignHandoff, handoffPath, nowIso, writeHandoff } from '../lib/run-access.ts'
import { withRunsWindow } from '../lib/run-index-window.ts'
import { nextFields } from '../lib/run-queries.ts'
import { checkHomeOutside, newRunId, pairLoopHome, runStatePath, runsDir } from '../lib/paths.ts'
import { withLock } from '../lib/lock.ts'
import { createRun, ensureRunsDir } from '../lib/store.ts'
import { newRun } from '../lib/transitions.ts'
import { transcriptEnvNow } from '../lib/cost/transcript-env.ts'

/** The task heads HANDOFF.md and the PR body: a paragraph, not a document. */
const MAX_TASK_BYTES = 8 * 1024

const start = defineScript({
  name: 'start',
  description: 'Open a pair-loop run in the repository here: clean tree required, HANDOFF.md created and git-excluded.',
  args: {
    task: { type: 'string', required: true, description: 'what the coder is to do (one line)' },
    coder: { type: 'enum', options: [...AGENTS], description: 'the coding agent (default from config: claude)' },
    reviewer: { type: 'enum', options: [...AGENTS], description: 'the reviewing agent (default from config: codex)' },
    'max-rounds': {
      type: 'string',
      description: 'reviewer rounds before asking the person (default 3)',
      valueHint: 'N',
    },
    'budget-usd': {
      type: 'string',
      description: 'spending limit for the run in USD (default from config)',
      valueHint: 'X',
    },
    base: {
      type: 'string',
      description:
        "the PR's base branch or commit: the review diffs against where HEAD meets it (default: the default branch)",
      valueHint: 'rev',
    },
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args) {
    const repo = await topLevel(args.cwd ?? process.cwd())
    checkHomeOutside(repo)
    // the base first: the repository's config is honoured by itself only as git tracks it there
    const { sha: baseSha, branch: baseBranch } = await reviewBase(repo, args.base ?? null)
    const tracked = existsSync(join(repo, REPO_CONFIG_NAME)) ? await blobAtBase(repo, baseSha, REPO_CONFIG_NAME) : null
    const config = loadConfig({ repo, baseBlob: tracked })
    const maxRounds = integerFlag(args['max-rounds'], 'max-rounds', { min: 1, max: 100 }) ?? config.pair_loop.max_rounds
    const budget = decimalFlag(args['budget-usd'], 'budget-usd', { positive: true }) ?? config.budget.per_run_usd
    if (!args.task.trim()) fail('usage', '--task needs a value', { flag: '--task' })
    const taskBytes = Buffer.byteLength(args.task)
    if (taskBytes > MAX_TASK_BYTES)
      fail('usage', `--task has ${taskBytes} bytes; the limit is ${MAX_TASK_BYTES} (8 KiB): put the detail in a file`, {
        flag: '--task',
        bytes: taskBytes,
        limit: MAX_TASK_BYTES,
      })

    const dirty = await dirtyPaths(repo)
    if (dirty.length > 0) {
      fail('dirty_tree', `${repo} has uncommitted changes; commit or stash them first`, {
        repo,
        paths: dirty.slice(0, 100),
        count: dirty.length,
      })
    }
    checkNoActiveRun(repo)
    const theirs = foreignHandoff(repo)
    if (theirs)
      fail(
        'dirty_tree',
        `${theirs} exists and no pair-loop run wrote it; move or rename it first (start would overwrite it)`,
        {
          repo,
          paths: [HANDOFF_NAME],
          count: 1,
        },
      )

    const state = newRun({
      run_id: newRunId(),
      task: stripControl(args.task).trim(),
      repo,
      branch: await currentBranch(repo),
      base_sha: baseSha,
      base_branch: baseBranch,
      coder: args.coder ?? config.pair_loop.coder,
      reviewer: args.reviewer ?? config.pair_loop.reviewer,
      max_rounds: maxRounds,
      budget_usd: budget,
      config,
      now: nowIso(),
    })
    state.transcript_env = transcriptEnvNow() // later commands look for the coder's transcripts where this one would
    // check and create under one lock per repository: two starts at once must not both open a run
    ensureRunsDir()
    // the lock's own directory in runs/ is taken into the runs index with the run (lib/run-index-window.ts)
    await withRunsWindow(pairLoopHome(), () =>
      withLock(join(runsDir(), `.start-${hexDigest(repo).slice(0, 16)}`), async () => {
        checkNoActiveRun(repo)
        await ensureExcluded(repo)
        await createRun(state, { afterWrite: writeHandoff })
      }),
    )
    const { pruneHomeDaily } = await import('../lib/cost/prune.ts') // caches do not grow for good
    pruneHomeDaily()
    return {
      run_id: state.run_id,
      state_path: runStatePath(state.run_id),
      handoff_path: handoffPath(state),
      base_sha: state.base_sha,
      branch: state.branch,
      coder: state.coder,
      reviewer: state.reviewer,
      max_rounds: state.max_rounds,
      budget_usd: state.budget_usd,
      ...nextFields(state),
    }
  },
})

/** No run of the repository is active (an unreadable one fails: it may be active). */
function checkNoActiveRun(repo: string): void {
  const active = activeRunsOf(repo).map((run) => run.run_id)
  if (active.length > 0)
    fail('run_active', `run ${active[0]} is still active in ${repo}; finish it first`, { repo, run_id: active[0] })
}

export default start
if (isMain(import.meta)) void main(start)
