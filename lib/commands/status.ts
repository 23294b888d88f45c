// status: where a run stands (or every run, with all), its cost so far; with wait, block until it changes (a review
// worker found dead is settled first, a PR merged since the last look is learnt).
import { reviewersOf, reviewerSource } from '../run/reviewer-identity.ts'
import { configDrift } from '../run/config-drift.ts'
import type { Context } from '../ground/context.ts'
import { fullyMeasured } from '../cost/measured.ts'
import { cachedCostSummary } from '../cost/status-snapshot.ts' // in lib's chunk: loaded with it anyway
import { interruptedError } from '../ground/errors.ts'
import { runStatePath } from '../ground/paths.ts'
import { runFigures } from '../report/figures.ts'
import { configChanged, configOf, handoffPath, resolveRun } from '../run/run-access.ts'
import { currentRound, mergedAt, nextFields, openFindings, roundsLeft } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import { listRuns, readRun } from '../run/store.ts'
import { gateApproval, gateFields } from '../run/gated-review.ts'
import { panelFields } from '../run/panel-shown.ts'

const POLL_MS = 100

export interface StatusOptions {
  run?: string
  cwd?: string
  /** Every run (not with `run`). */
  all: boolean
  /** Block up to this many seconds for a change, then say whether there was one. */
  waitS?: number
}

export async function run(ctx: Context, options: StatusOptions) {
  const { waitS } = options
  const stderr = ctx.io.stderr
  if (options.all) {
    await checkClaims(ctx.home, stderr)
    const before = allRunsDocument(ctx.home)
    if (waitS === undefined) return withMergedPrs(ctx, before)
    const changed = await waitFor(ctx, () => fingerprint(allRunsDocument(ctx.home)) !== fingerprint(before), waitS)
    return { ...(await withMergedPrs(ctx, allRunsDocument(ctx.home))), changed }
  }
  const found = await checkedRun(resolveRun(options, { allowFinished: true }), stderr)
  const run = found.pr ? await (await prMerges()).learnMerge(found) : found
  if (waitS === undefined) return runDocument(ctx, run)
  const before = meaningful(run)
  const changed = await waitFor(
    ctx,
    async () => meaningful(await checkedRun(readRun(run.run_id, ctx.home), stderr)) !== before,
    waitS,
  )
  return { ...(await runDocument(ctx, readRun(run.run_id, ctx.home))), changed }
}

async function runDocument(ctx: Context, run: RunState) {
  const cost = await cachedCostSummary(run, () => configOf(run), ctx.env)
  return {
    run_id: run.run_id,
    phase: run.phase,
    round: currentRound(run),
    rounds_left: roundsLeft(run),
    max_rounds: run.max_rounds,
    ...nextFields(run),
    task: run.task,
    repo: run.repo,
    branch: run.branch,
    coder: run.coder,
    reviewer: run.reviewer,
    reviewer_fallback: run.reviewer_fallback,
    reviewer_source: reviewerSource(run),
    reviewers: reviewersOf(run),
    open_findings: openFindings(run).map((f) => ({
      id: f.id,
      category: f.category,
      severity: f.severity,
      ...(f.severity_said ? { severity_said: f.severity_said } : {}),
      path: f.path,
      line: f.line_start,
      line_end: f.line_end,
      text: f.text,
      recurring: f.recurring,
      recurring_of: f.recurring_of,
    })),
    ...gateFields(gateApproval(run)), // findings below the gate left open by its approval: said, never silent
    ...panelFields(run.rounds.findLast((round) => round.reviewer)?.reviewer), // the last round's panel, each member
    replies: Object.keys(run.replies).length,
    review_in_progress: run.review_claim !== null,
    failed_reviews: run.failed_reviews.length,
    budget: { limit_usd: run.budget_usd, spent_usd: cost.total_usd, unmeasured: cost.unmeasured },
    outcome: run.outcome,
    pr: run.pr,
    pr_url: run.pr_url,
    ...(run.pr_unverified ? { pr_unverified: true } : {}),
    ...resolvedWithoutReply(run),
    revision: run.revision,
    updated_at: run.updated_at,
    state_path: runStatePath(run.run_id, ctx.home),
    handoff_path: handoffPath(run),
    config_changed: configChanged(run),
    config_warnings: configDrift(run).map(({ path, drift, message }) => ({ path, drift, message })),
  }
}

/** Threads resolved with nobody's answer (`pr-resolve --without-reply`): the person's choice, shown where they look. */
function resolvedWithoutReply(run: RunState) {
  const watch = run.pr_watch?.pr === run.pr ? run.pr_watch : null
  const threads = Object.entries(watch?.resolved ?? {})
    .filter(([, record]) => record.without_reply)
    .map(([thread, record]) => ({ thread, at: record.at }))
  return threads.length > 0 ? { pr_resolved_without_reply: threads } : {}
}

function allRunsDocument(home: string) {
  const runs = listRuns(home)
  return {
    states: runs.flatMap((entry) => ('state' in entry ? [entry.state] : [])),
    runs: runs.flatMap((entry) => ('state' in entry ? [summarise(entry.state)] : [])),
    unreadable: runs.flatMap((entry) =>
      'error' in entry ? [{ run_id: entry.run_id, code: entry.error.code, message: entry.error.message }] : [],
    ),
  }
}

function summarise(run: RunState) {
  return {
    run_id: run.run_id,
    phase: run.phase,
    round: currentRound(run),
    ...nextFields(run),
    task: run.task,
    repo: run.repo,
    branch: run.branch,
    created_at: run.created_at,
    open_findings: openFindings(run).length,
    outcome: run.outcome?.verdict ?? null,
    pr: run.pr,
    merged_at: mergedAt(run),
    revision: run.revision,
    updated_at: run.updated_at,
  }
}

/** The PR phase's merge look-up, loaded only when a run has a PR: the PR code is a third of a plain status's start. */
const prMerges = () => import('../pr/merged.ts')

/** The all-runs document with each run's cost, and what merged PRs cost (the report's one definition). */
async function withMergedPrs(ctx: Context, { states: listed, ...document }: ReturnType<typeof allRunsDocument>) {
  const { learnMerges, mergedPrFigures } = await prMerges()
  const states = await learnMerges(listed) // a PR merged after the last tick is learnt here, once
  const seen = new Map<string, string>() // each folder's print taken once for all the runs
  const costs = await Promise.all(states.map((run) => cachedCostSummary(run, () => configOf(run), ctx.env, seen)))
  const figures = states.map((run, i) =>
    runFigures(run, { spent: costs[i]!.total_usd, measured: fullyMeasured(costs[i]!) }),
  )
  const runs = document.runs.map((entry, i) => ({
    ...entry,
    merged_at: mergedAt(states[i]!),
    cost_usd: costs[i]!.total_usd,
    measured: figures[i]!.measured,
    cross_vendor: figures[i]!.cross_vendor,
  }))
  return { ...document, runs, merged_prs: mergedPrFigures(states, figures) }
}

const fingerprint = (doc: ReturnType<typeof allRunsDocument>) =>
  JSON.stringify([doc.runs.map((r) => `${r.run_id}:${r.revision}`), doc.unreadable.map((u) => u.run_id)])

/** The claim's liveness check: a review worker found dead is settled (its attempt kept), never left "running". */
async function checkedRun(run: RunState, stderr: (text: string) => void): Promise<RunState> {
  if (!run.review_claim) return run
  const { settleDeadClaim } = await import('../review/dead-worker.ts')
  return settleDeadClaim(run, { log: (line) => stderr(`pair-loop status: ${line}\n`) })
}

/** The same check on every run that has a review in flight. */
async function checkClaims(home: string, stderr: (text: string) => void): Promise<void> {
  for (const entry of listRuns(home)) if ('state' in entry) await checkedRun(entry.state, stderr)
}

/**
 * What `status --wait` waits to change: the run, less its revision and how its review claim is held (the worker taking
 * it over, noting its reviewer), so a review in flight wakes it when it ends, not when it settles in.
 */
function meaningful(run: RunState): string {
  const { revision: _revision, updated_at: _updated, review_claim, ...rest } = run
  return JSON.stringify([rest, review_claim?.attempt ?? review_claim?.started_at ?? null])
}

/** Poll (fs.watch differs across runtimes and filesystems) until `changed` or the time is up; a signal stops the
 * wait with `interrupted` (a cron loop still reads JSON). */
async function waitFor(ctx: Context, changed: () => boolean | Promise<boolean>, seconds: number): Promise<boolean> {
  const { signal } = ctx.io
  const deadline = ctx.now() + seconds * 1000
  for (;;) {
    if (signal?.aborted) throw interruptedError(signal, 'status --wait')
    if (await changed()) return true
    const left = deadline - ctx.now()
    if (left <= 0) return false
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)))
  }
}
