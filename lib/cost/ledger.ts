// The run's ledger: coder spend from its transcripts between the run's start and finish, split into rounds at the
// coder-done times; reviewer spend per call as recorded on the run; per role, round and model, tokens and USD;
// and every source read or skipped, with why.
import { realpathSync, statSync } from 'node:fs'
import type { ModelPrice } from '../config.ts'
import { cacheDir, pairLoopHome, runStatePath } from '../paths.ts'
import type { ReviewerCost, RunState, Usage } from '../state.ts'
import type { Skip, ScanResult } from './cache.ts'
import { UsageSums, claudeSessionFiles, scanClaude, sumClaude } from './claude.ts'
import { scanCodex, sumCodex } from './codex.ts'
import {
  claudeSessions,
  codexRolloutForThread,
  codexRollouts,
  codexSessionMeta,
  type CodexSessionMeta,
} from './locate.ts'
import { addTokens, priceBook, zeroTokens, type PriceBook, type Tokens } from './pricing.ts'
import { usageFamily, usageTokens } from './reviewer.ts'

export interface LedgerOptions {
  env?: NodeJS.ProcessEnv
  pricing?: Record<string, ModelPrice>
  /** Keep per-file read offsets under $PAIR_LOOP_HOME/cache (default true). */
  cache?: boolean
}

export interface ModelCost {
  usd: number
  tokens: Tokens
}

export interface RoleCost {
  usd: number
  tokens: Tokens
  models: Record<string, ModelCost>
}

export interface RoundCost {
  n: number
  /** The round being worked on now (its coder spend is still growing). */
  in_progress: boolean
  usd: number
  coder: RoleCost & { from: string; to: string | null }
  reviewer: RoleCost & { calls: number; failed_calls: number }
}

export interface Source {
  role: 'coder' | 'reviewer'
  kind: 'claude' | 'codex' | 'custom' | 'state'
  session?: string | null
  round?: number
  path: string | null
  status: 'read' | 'missing' | 'unreadable' | 'recorded' | 'unmeasured'
  why?: string
  /** Transcript files: bytes counted (whole lines), of an unfinished last line, and read by this check. */
  bytes?: number
  pending_bytes?: number
  read_bytes?: number
  lines?: number
  entries?: number
  skipped?: Skip[]
  /** Reviewer calls: which figure `usd` is (usage, reported, transcript) and the cross-checks. */
  cost_source?: string
  usd?: number | null
  transcript_usd?: number | null
  reported_usd?: number | null
}

export interface Ledger {
  run_id: string
  spent_usd: number
  by_role: { coder: RoleCost; reviewer: RoleCost & { calls: number; failed_calls: number } }
  rounds: RoundCost[]
  by_model: Record<string, ModelCost & { role: 'coder' | 'reviewer' | 'both' }>
  unpriced_models: string[]
  /** Every figure measured: no unknown model, no missing or unreadable transcript, no reviewer call without a cost. */
  complete: boolean
  sources: Source[]
}

const roleCost = (): RoleCost => ({ usd: 0, tokens: zeroTokens(), models: {} })

function addTo(role: RoleCost, model: string, usd: number, tokens: Tokens | null): void {
  role.usd += usd
  const m = (role.models[model] ??= { usd: 0, tokens: zeroTokens() })
  m.usd += usd
  if (tokens) {
    addTokens(role.tokens, tokens)
    addTokens(m.tokens, tokens)
  }
}

export function computeLedger(run: RunState, options: LedgerOptions = {}): Ledger {
  const env = options.env ?? process.env
  const prices = priceBook(options.pricing)
  const cache = options.cache === false ? null : cacheDir(pairLoopHome(env))
  const sources: Source[] = []
  const unpriced = new Set<string>()
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

  // --- coder: its sessions' transcripts, de-duplicated together, each response placed in its round (window w is
  // round w + 1; the window after the last coder-done is the round in progress, or the last round's tail)
  const sums = new UsageSums([start, ...doneTimes, end])
  sumCoder(run, env, prices, cache, sources, sums)
  sums.models.forEach((model, m) => {
    if (!sums.priced[m]) unpriced.add(model)
    const d = sums.data[m]!
    for (let w = 0; w < sums.windows; w++) {
      const at = w * 6
      if (d[at] === 0 && d[at + 1] === 0 && d[at + 2] === 0 && d[at + 3] === 0 && d[at + 4] === 0 && d[at + 5] === 0)
        continue
      const row = rows[Math.min(w, rows.length - 1)]!
      addUsage(row.coder, model, d[at]!, d[at + 1]!, d[at + 2]!, d[at + 3]!, d[at + 4]!, d[at + 5]!)
      addUsage(byRole.coder, model, d[at]!, d[at + 1]!, d[at + 2]!, d[at + 3]!, d[at + 4]!, d[at + 5]!)
    }
  })
  if (sources.some((s) => s.role === 'coder' && s.status !== 'read')) complete = false

  // --- reviewer: each call's recorded cost, failed attempts included (they were paid for)
  const rowFor = (n: number) => rows.find((r) => r.n === n) ?? rows[rows.push(newRow(n, run.created_at, null)) - 1]!
  const addCall = (
    n: number,
    tool: 'claude' | 'codex' | 'custom',
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
    for (const name of cost?.unpriced_models ?? []) unpriced.add(name)
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
    if (r) addCall(round.n, r.tool, r.model, r.usage, r.cost, r.session_id, false, r.calls ?? 1)
  }
  for (const f of run.failed_reviews) addCall(f.round, f.tool, null, null, f.cost, f.session_id ?? null, true, 1)

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
    complete,
    sources,
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
  const m = (role.models[model] ??= { usd: 0, tokens: zeroTokens() })
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

/**
 * The coder's sessions: those recorded at each coder-done, plus its newest session for the repository (the one
 * in progress) when it was written since the run started. Reviewer sessions are never counted as the coder's.
 */
export function coderSessionIds(run: RunState, env: NodeJS.ProcessEnv = process.env): string[] {
  const reviewerIds = new Set<string>()
  for (const round of run.rounds) if (round.reviewer?.session_id) reviewerIds.add(round.reviewer.session_id)
  for (const f of run.failed_reviews) if (f.session_id) reviewerIds.add(f.session_id)
  const ids: string[] = []
  for (const round of run.rounds) {
    const id = round.coder.session_id
    if (id && !ids.includes(id) && !reviewerIds.has(id)) ids.push(id)
  }
  const since = Date.parse(run.created_at)
  const candidates = run.coder === 'claude' ? claudeSessions(run.repo, env) : codexSessionsSince(run.repo, since, env)
  const newest = candidates.find((s) => !reviewerIds.has(s.id) && s.mtimeMs >= since)
  if (newest && !ids.includes(newest.id)) ids.push(newest.id)
  return ids
}

/** Codex sessions of the repository written since `since`, newest first (only those rollouts' first lines are read). */
function codexSessionsSince(repo: string, since: number, env: NodeJS.ProcessEnv): CodexSessionMeta[] {
  let real = repo
  try {
    real = realpathSync(repo)
  } catch {}
  const found: CodexSessionMeta[] = []
  for (const path of codexRollouts(env)) {
    try {
      if (statSync(path).mtimeMs < since) continue
    } catch {
      continue
    }
    const meta = codexSessionMeta(path)
    if (meta?.cwd && (meta.cwd === real || meta.cwd.startsWith(`${real}/`))) found.push(meta)
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs)
}

function sumCoder(
  run: RunState,
  env: NodeJS.ProcessEnv,
  prices: PriceBook,
  cache: string | null,
  sources: Source[],
  sums: UsageSums,
): void {
  const ids = coderSessionIds(run, env)
  if (ids.length === 0) {
    sources.push({
      role: 'coder',
      kind: run.coder,
      session: null,
      path: null,
      status: 'missing',
      why: `no ${run.coder} session recorded for this run or written in ${run.repo} since it started`,
    })
    return
  }
  if (run.coder === 'claude') {
    const scans: ScanResult[] = []
    for (const id of ids) {
      const files = claudeSessionFiles(id, { repo: run.repo, env })
      if (!files.main) {
        sources.push({
          role: 'coder',
          kind: 'claude',
          session: id,
          path: null,
          status: 'missing',
          why: `no transcript ${id}.jsonl under ${files.looked_in}`,
        })
        continue
      }
      for (const path of [files.main, ...files.subagents]) {
        const scan = scanClaude(path, cache)
        sources.push(fileSource('claude', id, scan))
        scans.push(scan)
      }
    }
    sumClaude(scans, prices, sums)
    return
  }
  for (const id of ids) {
    const path = codexRolloutForThread(id, env)
    if (!path) {
      sources.push({
        role: 'coder',
        kind: 'codex',
        session: id,
        path: null,
        status: 'missing',
        why: `no rollout-*-${id}.jsonl under ${env.CODEX_HOME || '~/.codex'}/sessions or archived_sessions`,
      })
      continue
    }
    const scan = scanCodex(path, cache, env)
    sources.push(fileSource('codex', id, scan))
    sumCodex(scan, prices, sums)
  }
}

function fileSource(kind: 'claude' | 'codex', session: string, scan: ScanResult): Source {
  const source: Source = { role: 'coder', kind, session, path: scan.path, status: scan.status }
  if (scan.why) source.why = scan.why
  if (scan.status === 'read') {
    Object.assign(source, {
      bytes: scan.offset,
      pending_bytes: scan.pending_bytes,
      read_bytes: scan.read_bytes,
      lines: scan.lines,
      entries: scan.count,
    })
    if (scan.skipped.length) {
      source.skipped = scan.skipped
      source.why = scan.skipped
        .map((s) => `${s.count} line${s.count === 1 ? '' : 's'} skipped: ${s.reason} (first at line ${s.first_line})`)
        .join('; ')
    }
    if (scan.pending_bytes > 0)
      source.why = [source.why, `last line unfinished (${scan.pending_bytes} bytes), not counted yet`]
        .filter(Boolean)
        .join('; ')
  }
  return source
}
