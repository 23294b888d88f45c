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
import { pairLoopHome, prSnapshotPath, runStatePath } from '../ground/paths.ts'
import { afterUnapprovedHead, approvedTree, isActive, nextFields, prRounds } from '../run/run-queries.ts'
import { checkHeadCommit, commitTreeOnGitHub } from '../snapshot/ship.ts'
import { changeRun } from '../run/run-access.ts'
import { readRun } from '../run/store.ts'
import type { RunState } from '../run/state.ts'
import { parseJson, validate } from '../ground/validate.ts'
import { collectSnapshot } from './collect.ts'
import { applyTick, expectPr, recordTickError, watchOf } from './moves.ts'
import { MAX_FIX_ATTEMPTS, reducePr, type Decision, type PrResult } from './reduce.ts'
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
  /** Decide and print, record nothing: no tick counted (the backoff stays), no snapshot kept, no error left. */
  dryRun?: boolean
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
      if (!NOT_A_TICK.has(failure.code) && !options.snapshotIn && !options.dryRun)
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
      not_approved: endedUnapproved(state),
      pr_rounds: prRounds(state),
    })
  // a dry run keeps nothing: --dry-run (and --text without --record) only looks; a replay (--snapshot-in) is one
  // always, since its file is the caller's (the coder's) and decides nothing on the run
  const dryRun = options.dryRun || Boolean(options.snapshotIn)
  const ticked = dryRun
    ? withHeadNext(run, shipped, lookOnly(readRun(run.run_id), reduce))
    : await changeRun(run.run_id, (state) => {
        const { watch, result } = reduce(state)
        const withNext = withHeadNext(state, shipped, result)
        const step = applyTick(state, {
          watch: { ...watch, snapshot_path: path, head_next: withNext.headNext },
          result: withNext,
        })
        if (shipped) delete step.state!.pr_unverified // GitHub's head was compared: the number finish kept is verified
        writeFileAtomic(path, `${JSON.stringify(snapshot, null, 2)}\n`)
        return step
      })
  const stopped = watchOf(run)?.stopped ?? null
  const { headNext, ...result } = ticked
  return {
    run_id: run.run_id,
    ...result,
    recorded: !dryRun,
    ...(dryRun ? { dry_run: true } : {}),
    ...(run.pr_unverified ? { pr_unverified: shipped === null } : {}),
    snapshot_path: dryRun ? (watchOf(run)?.snapshot_path ?? null) : path,
    state_path: runStatePath(run.run_id, pairLoopHome()),
    // one name for every tick of this PR: a cron or a scheduled wake-up is replaced, never added twice
    schedule_name: scheduleName(run, number),
    ...(stopped ? { stopped } : {}), // only once the person ended the watch (pr-stop)
    // a run the final round sent back to coding follows the loop until it is finished again
    ...(isActive(run)
      ? nextFields(run)
      : {
          next: stopped ? null : nextAfter(result.decision, headNext),
          ...(!stopped && result.decision === 'escalate' && !headNext ? { ask: askPrEscalated() } : {}),
        }),
  }
}

/** The tick's result on the run as it is, its checks made (the snapshot is of the run's PR), nothing kept. */
function lookOnly(state: RunState, reduce: (state: RunState) => ReturnType<typeof reducePr>): PrResult {
  const { watch, result } = reduce(state)
  applyTick<PrResult>(state, { watch, result })
  return result
}

/** The stable name of this PR's watch, for a cron or a scheduled wake-up. */
const scheduleName = (run: RunState, pr: number) => `pair-loop-${run.run_id}-pr-${pr}`

/** The verdict a finished run ended with when it is not APPROVED; null while it runs or once approved. */
const endedUnapproved = (run: RunState) =>
  run.outcome && run.outcome.verdict !== 'APPROVED' && !isActive(run) ? run.outcome.verdict : null

/**
 * keep_going: tick again after `backoff.wait_s` (answering what is actionable first); escalate: ask the person, unless
 * the head is what stands in the way (`push` the newest approved tree, or `coder-done` to have a pushed change reviewed).
 */
const nextAfter = (decision: Decision, headNext: 'push' | 'coder-done' | null) =>
  decision === 'keep_going' ? 'pr-check' : decision === 'escalate' ? (headNext ?? 'ask-user') : null

/**
 * The head is not the newest approved tree, on an open PR whose fix attempts are not used up: the way on is the agent's
 * (`push` an approved tree it has not pushed, else `coder-done` then `review`), not the person's. Null otherwise.
 */
function unapprovedHeadNext(
  run: RunState,
  shipped: { matches: boolean; head_tree: string } | null,
  result: PrResult,
): 'push' | 'coder-done' | null {
  if (!shipped || shipped.matches || result.pr.state !== 'OPEN') return null
  if (result.recurrence.fix_attempts >= MAX_FIX_ATTEMPTS) return null
  return afterUnapprovedHead(run, shipped.head_tree)
}

/** The result with the way on past an unapproved head (`headNext`), and the paths an unreviewed push changed. */
function withHeadNext(
  run: RunState,
  shipped: { matches: boolean; head_tree: string; paths: string[] } | null,
  result: PrResult,
) {
  const headNext = unapprovedHeadNext(run, shipped, result)
  return { ...result, ...(headNext ? { changed_paths: shipped!.paths } : {}), headNext }
}

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
