// The run's ledger: coder spend from its transcripts between the run's start and finish, split into rounds at the
// coder-done times; reviewer spend per call as recorded on the run; per role, round and model, tokens and USD;
// and every source read or skipped, with why.
import type { ReviewerTool } from '../run/vendors.ts'
import { cacheDir, pairLoopHome, runStatePath } from '../ground/paths.ts'
import type { ReviewerCost, RunState, Usage } from '../run/state.ts'
import { reviewerSessionIds } from '../run/run-queries.ts'
import { sumCoder } from './coder.ts'
import { seenBySession, shortfalls } from './high-water.ts'
import type { Ledger, LedgerOptions, ModelCost, RoleCost, RoundCost, Source } from './ledger-types.ts'
import { addTokens, priceBook, zeroTokens, type Tokens } from './pricing.ts'
import { usageFamily, usageTokens } from './reviewer.ts'
import { CELL } from './sums.ts'
import { coderLocations } from './transcript-env.ts'
import { context } from '../ground/context.ts'

const roleCost = (): RoleCost => ({ usd: 0, tokens: zeroTokens(), models: {} })

/** A role's figures for one model, made on first use. */
function modelOf(role: RoleCost, model: string): ModelCost {
  let m = role.models[model]
  if (!m) {
    m = { usd: 0, tokens: zeroTokens() }
    role.models[model] = m
  }
  return m
}

function addTo(role: RoleCost, model: string, usd: number, tokens: Tokens | null): void {
  role.usd += usd
  const m = modelOf(role, model)
  m.usd += usd
  if (tokens) {
    addTokens(role.tokens, tokens)
    addTokens(m.tokens, tokens)
  }
}

export function computeLedger(run: RunState, options: LedgerOptions): Ledger {
  const env = options.env ?? context().env
  const prices = priceBook(options.pricing)
  const cache = options.cache === false ? null : cacheDir(pairLoopHome(env))
  const sources: Source[] = []
  const unpriced = new Set<string>()
  const unpricedUsage = new Set<string>()
  let complete = true

  // Round windows: round k's coder spend is what was spent before its coder-done and after the previous one.
  const start = Date.parse(run.created_at)
  const end = run.outcome ? Date.parse(run.outcome.finished_at) : Infinity
  const doneTimes = run.rounds.map((r) => Date.parse(r.coder.done_at))
  const coding = run.phase === 'coding' || run.rounds.length === 0
  const rows: RoundCost[] = run.rounds.map((round, k) =>
    newRow(round.n, k === 0 ? run.created_at : run.rounds[k - 1]!.coder.done_at, round.coder.done_at),
  )
  if (coding)
    rows.push(
      newRow(
        run.rounds.length + 1,
        run.rounds.at(-1)?.coder.done_at ?? run.created_at,
        run.outcome?.finished_at ?? null,
      ),
    )
  // outside `coding` the coder's spend after its last coder-done (waiting on the review, replying, finishing) is the
  // last round's
  else rows.at(-1)!.coder.to = run.outcome?.finished_at ?? null
  if (run.phase === 'coding' || run.phase === 'reviewing') rows.at(-1)!.in_progress = true
  const byRole = { coder: roleCost(), reviewer: { ...roleCost(), calls: 0, failed_calls: 0 } }

  // --- coder: its sessions' transcripts (located where the run started), de-duplicated together, each response
  // placed in its round (window w is round w + 1; the window after the last coder-done is the round in progress, or
  // the last round's tail)
  const locations = coderLocations(run, env)
  const { sums, bySession } = sumCoder(run, locations, prices, cache, sources, [start, ...doneTimes, end])
  const rowOfWindow = (w: number) => rows[Math.min(w, rows.length - 1)]!
  sums.models.forEach((model, m) => {
    if (!sums.priced[m]) unpriced.add(model)
    const d = sums.data[m]!
    for (let w = 0; w < sums.windows; w++) {
      const at = w * CELL
      if (d[at] === 0 && d[at + 1] === 0 && d[at + 2] === 0 && d[at + 3] === 0 && d[at + 4] === 0 && d[at + 5] === 0)
        continue
      if (!sums.priced[m]) unpricedUsage.add(model)
      const row = rowOfWindow(w)
      addUsage(row.coder, model, d[at]!, d[at + 1]!, d[at + 2]!, d[at + 3]!, d[at + 4]!, d[at + 5]!)
      addUsage(byRole.coder, model, d[at]!, d[at + 1]!, d[at + 2]!, d[at + 3]!, d[at + 4]!, d[at + 5]!)
    }
  })
  if (sources.some((s) => s.role === 'coder' && s.status !== 'read')) complete = false
  // money a session's transcripts showed before and no longer do still counts, where it was counted
  const windowStarts = [run.created_at, ...run.rounds.map((r) => r.coder.done_at)]
  const seen = seenBySession(bySession, windowStarts)
  for (const gone of shortfalls(run.coder_high_water, seen, reviewerSessionIds(run))) {
    const w = windowStarts.indexOf(gone.window)
    const row = w < 0 ? rows.at(-1)! : rowOfWindow(w)
    addTo(row.coder, gone.model, gone.usd, null)
    addTo(byRole.coder, gone.model, gone.usd, null)
    const source = sources.find((s) => s.kind === 'state' && s.session === gone.session)
    if (source) source.usd = (source.usd ?? 0) + gone.usd
    else
      sources.push({
        role: 'coder',
        kind: 'state',
        session: gone.session,
        path: runStatePath(run.run_id, pairLoopHome(env)),
        status: 'recorded',
        usd: gone.usd,
        why: 'counted before, no longer in its transcripts (truncated, replaced or removed): the most counted stays',
      })
  }

  // --- reviewer: each call's recorded cost, failed attempts included (they were paid for)
  const rowFor = (n: number) => rows.find((r) => r.n === n) ?? rows[rows.push(newRow(n, run.created_at, null)) - 1]!
  const addCall = (
    n: number,
    tool: ReviewerTool,
    model: string | null,
    usage: Usage | null,
    cost: ReviewerCost | null,
    session: string | null,
    failed: boolean,
    calls: number,
  ) => {
    const row = rowFor(n)
    const family = usageFamily({ tool, model, usage, reported_usd: cost?.reported_usd ?? null })
    const tokens = usage ? usageTokens(family, usage) : null
    const usd = cost?.usd ?? 0
    const models = Object.entries(cost?.models ?? {})
    // spread the call over its models; the tokens go to its main model
    const mainModel = model ?? models[0]?.[0] ?? '(unknown model)'
    const modelsSum = models.reduce((sum, [, v]) => sum + v, 0)
    for (const target of [row.reviewer, byRole.reviewer]) {
      if (models.length && Math.abs(modelsSum - usd) < 1e-12 * Math.max(1, usd)) {
        for (const [name, value] of models) addTo(target, name, value, name === mainModel ? tokens : null)
        if (!models.some(([name]) => name === mainModel) && tokens) addTokens(target.tokens, tokens)
      } else addTo(target, mainModel, usd, tokens)
      target.calls += calls
      if (failed) target.failed_calls += 1
    }
    for (const name of cost?.unpriced_models ?? []) {
      unpriced.add(name)
      if (cost?.source !== 'reported') unpricedUsage.add(name) // the CLI's own figure covers a model we cannot price
    }
    if (cost?.usd === null || cost?.usd === undefined) complete = false
    sources.push({
      role: 'reviewer',
      kind: tool,
      round: n,
      session,
      path: runStatePath(run.run_id, pairLoopHome(env)),
      status: cost && cost.usd !== null ? 'recorded' : 'unmeasured',
      ...(cost && cost.usd !== null
        ? {}
        : { why: failed ? 'failed call with no cost in its output' : 'no usage or cost recorded for this call' }),
      cost_source: cost?.source ?? 'none',
      usd: cost?.usd ?? null,
      transcript_usd: cost?.transcript_usd ?? null,
      reported_usd: cost?.reported_usd ?? null,
    })
  }
  for (const round of run.rounds) {
    const r = round.reviewer
    // a panel's round: each member's calls, at each member's cost (the round's sums are for people, not the ledger)
    if (r?.panel)
      for (const m of r.panel)
        addCall(round.n, m.tool, m.model, m.usage, m.cost, m.session_id, m.failure !== undefined, m.calls)
    else if (r) addCall(round.n, r.tool, r.model, r.usage, r.cost, r.session_id, false, r.calls ?? 1)
  }
  for (const f of run.failed_reviews) addCall(f.round, f.tool, null, null, f.cost, f.session_id ?? null, true, 1)
  // the PR's final round (`review --pr`) is the run's spend too, in its last round (counted there once it asked for
  // changes: it is then a round of its own)
  const final = run.final_review?.review
  if (final && !run.rounds.some((round) => round.reviewer?.at === final.at)) {
    const n = Math.max(1, run.rounds.length)
    addCall(n, final.tool, final.model, final.usage, final.cost, final.session_id, false, final.calls ?? 1)
  }

  rows.sort((a, b) => a.n - b.n)
  for (const row of rows) row.usd = row.coder.usd + row.reviewer.usd
  const byModel: Ledger['by_model'] = {}
  for (const role of ['coder', 'reviewer'] as const) {
    for (const [name, m] of Object.entries(byRole[role].models)) {
      const into = byModel[name]
      if (into) {
        into.usd += m.usd
        addTokens(into.tokens, m.tokens)
        into.role = 'both'
      } else byModel[name] = { usd: m.usd, tokens: { ...m.tokens }, role }
    }
  }
  if (unpriced.size) complete = false
  return {
    run_id: run.run_id,
    spent_usd: byRole.coder.usd + byRole.reviewer.usd,
    by_role: byRole,
    rounds: rows,
    by_model: byModel,
    unpriced_models: [...unpriced].sort(),
    unpriced_usage: [...unpricedUsage].sort(),
    complete,
    sources,
    seen,
  }
}

function addUsage(
  role: RoleCost,
  model: string,
  usd: number,
  input: number,
  output: number,
  w5m: number,
  w1h: number,
  read: number,
): void {
  role.usd += usd
  const t = role.tokens
  t.input += input
  t.output += output
  t.cache_write_5m += w5m
  t.cache_write_1h += w1h
  t.cache_read += read
  const m = modelOf(role, model)
  m.usd += usd
  const mt = m.tokens
  mt.input += input
  mt.output += output
  mt.cache_write_5m += w5m
  mt.cache_write_1h += w1h
  mt.cache_read += read
}

function newRow(n: number, from: string, to: string | null): RoundCost {
  return {
    n,
    in_progress: false,
    usd: 0,
    coder: { ...roleCost(), from, to },
    reviewer: { ...roleCost(), calls: 0, failed_calls: 0 },
  }
}
