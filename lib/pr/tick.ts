// One pr-check tick: collect (or replay a captured snapshot), then under the run's lock reduce against what the run kept
// of the PR and persist it with the snapshot beside the state. Collecting happens before the lock is taken, so a tick's
// network time never holds up another command; the reduce reads the state as it is under the lock.
import { askPrEscalated } from '../run/ask.ts'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Config } from '../run/config.ts'
import { type Context, context, nowIso, withContext } from '../ground/context.ts'
import { fail, toPairLoopError } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { ghTarget } from '../ground/gh.ts'
import { pairLoopHome, prSnapshotPath } from '../ground/paths.ts'
import { approvedTree, isActive, nextFields } from '../run/run-queries.ts'
import { checkHeadCommit, commitTreeOnGitHub } from '../snapshot/ship.ts'
import { changeRun } from '../run/run-access.ts'
import { readRun } from '../run/store.ts'
import type { RunState } from '../run/state.ts'
import { parseJson, validate } from '../ground/validate.ts'
import { collectSnapshot } from './collect.ts'
import { applyTick, expectPr, recordTickError, watchOf } from './moves.ts'
import { reducePr, type Decision, type PrResult } from './reduce.ts'
import { Snapshot } from '../run/pr-schema.ts'

export interface TickOptions {
  config: Config
  /** Replay this captured snapshot instead of collecting (tests, debugging): a dry run, nothing on the run changes. */
  snapshotIn?: string
  /** Also write the snapshot read here (it is always kept beside the state, where pr-reply and pr-flag read it). */
  snapshotOut?: string
  /** Page size of every GraphQL connection (default GitHub's largest, 100). */
  pageSize?: number
  /** Time limit of each gh call, in seconds (default 60). */
  timeoutS?: number
  /** The tick's time (ISO 8601), for tests and replays: the clock of everything the tick does. */
  now?: string
  cwd?: string
}

/** Errors that are not a failed tick: a command line to fix, or a run another command holds (nothing to write). */
const NOT_A_TICK = new Set(['usage', 'locked'])

/** One tick; a tick that fails keeps its error on the run (`pr_watch.last_error`) and fails as it did. */
export async function prTick(run: RunState, options: TickOptions) {
  const ctx = context()
  const startedAt = ctx.now()
  const tickContext: Context = {
    ...ctx,
    // the gh runner's own settings, for this tick's calls only
    env: options.timeoutS === undefined ? ctx.env : { ...ctx.env, PAIR_LOOP_GH_TIMEOUT_S: String(options.timeoutS) },
    // from --now on, the clock runs: waits and time limits still measure real time
    now: options.now === undefined ? ctx.now : () => Date.parse(options.now!) + (ctx.now() - startedAt),
  }
  return withContext(tickContext, async () => {
    try {
      return await tickOnce(run, options)
    } catch (error) {
      const failure = toPairLoopError(error)
      if (!NOT_A_TICK.has(failure.code) && !options.snapshotIn)
        await changeRun(run.run_id, (state) =>
          recordTickError(state, { code: failure.code, message: failure.message, at: options.now ?? nowIso() }),
        ).catch(() => {}) // the tick's own error is the answer, whether or not it could be kept
      throw failure
    }
  })
}

async function tickOnce(run: RunState, options: TickOptions) {
  const number = expectPr(run, 'pr-check')
  const snapshot = options.snapshotIn
    ? readSnapshot(resolve(options.cwd ?? context().cwd, options.snapshotIn))
    : await collectSnapshot({
        at: ghTarget(run),
        number,
        pageSize: options.pageSize,
        // the runs github-actions[bot] comments link to are looked up only when an entry names a workflow
        lookUpRuns: options.config.pair_loop.pr_action_reviews.some((entry) => entry.workflow !== undefined),
      })
  if (options.snapshotOut)
    writeFileAtomic(
      resolve(options.cwd ?? context().cwd, options.snapshotOut),
      `${JSON.stringify(snapshot, null, 2)}\n`,
    )
  const path = prSnapshotPath(run.run_id)
  // what ships is what was approved: the head's tree as GitHub reports it (a replayed snapshot is not compared)
  const approved = approvedTree(run)
  const shipped =
    approved && !options.snapshotIn
      ? await checkHeadCommit(
          ghTarget(run),
          {
            head: snapshot.pr.head,
            tree: await commitTreeOnGitHub(ghTarget(run), snapshot.pr.head),
            target: snapshot.pr.base,
          },
          { tree: approved, base: run.base_sha },
          pairLoopHome(),
        )
      : null
  const reduce = (state: RunState) =>
    reducePr(snapshot, watchOf(state), {
      now: options.now ?? nowIso(), // the tick is at --now
      bots: options.config.pair_loop.pr_bots,
      action_reviews: options.config.pair_loop.pr_action_reviews,
      shipped,
    })
  // a replay is a dry run: the file is the caller's (the coder's), so it decides nothing on the run, and keeps nothing
  if (options.snapshotIn) {
    const state = readRun(run.run_id)
    const { watch, result } = reduce(state)
    applyTick<PrResult>(state, { watch, result }) // its checks (the snapshot is of the run's PR); the step is not kept
    return { run_id: run.run_id, dry_run: true, ...result }
  }
  const result = await changeRun(run.run_id, (state) => {
    const { watch, result } = reduce(state)
    const step = applyTick<PrResult>(state, { watch: { ...watch, snapshot_path: path }, result })
    writeFileAtomic(path, `${JSON.stringify(snapshot, null, 2)}\n`)
    return step
  })
  const stopped = watchOf(run)?.stopped ?? null
  return {
    run_id: run.run_id,
    ...result,
    snapshot_path: path,
    ...(stopped ? { stopped } : {}), // only once the person ended the watch (pr-stop)
    // a run the final round sent back to coding follows the loop until it is finished again
    ...(isActive(run)
      ? nextFields(run)
      : {
          next: stopped ? null : nextAfter(result.decision),
          ...(!stopped && result.decision === 'escalate' ? { ask: askPrEscalated() } : {}),
        }),
  }
}

/** keep_going: tick again after `backoff.wait_s` (answering what is actionable first); escalate: ask the person. */
const nextAfter = (decision: Decision) =>
  decision === 'keep_going' ? 'pr-check' : decision === 'escalate' ? 'ask-user' : null

/** The snapshot the last pr-check wrote beside the state (what pr-reply and pr-flag take ids from); none is `usage`. */
export function lastSnapshot(run: RunState): Snapshot {
  const path = prSnapshotPath(run.run_id)
  if (!existsSync(path))
    fail('usage', `run ${run.run_id} has no pr-check snapshot yet; run \`pair-loop pr-check\` first`, {
      run_id: run.run_id,
      next: 'pr-check',
    })
  return readSnapshot(path)
}

/** A snapshot file in DESIGN.md's shape; anything else is `usage`, naming the file and the issues. */
export function readSnapshot(path: string): Snapshot {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    fail('usage', `cannot read the snapshot ${path}: ${(error as Error).message}`, {
      flag: '--snapshot-in',
      file: path,
    })
  }
  return validate(Snapshot, parseJson(text, 'usage', path), 'usage', path)
}
