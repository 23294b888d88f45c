// The figures of bench/round-cost.mjs: a round's tokens from Anthropic or Responses usage (the mock's bill or what
// pair-loop recorded), priced by hand at the rates below, pair-loop's record checked against the bill, and the medians
// and ratios over the runs.
import { MODELS } from './_round-loop.mjs'
import { median } from './_util.mjs'

export const TARGET = 0.4

/** USD per million tokens (shared/reference/transcripts-and-pricing.md §5), written out here, not read from lib/. */
const RATES = {
  [MODELS.claude]: { input: 3, write_5m: 3.75, write_1h: 6, read: 0.3, output: 15 },
  [MODELS.codex]: { input: 5, write_5m: 6.25, write_1h: 6.25, read: 0.5, output: 30 },
}
const KEYS = ['uncached', 'w5m', 'w1h', 'read', 'out']

/** Tokens from Anthropic usage (the mock's or pair-loop's record of a claude call). */
function anthropicTokens(u) {
  const h1 = u.cache_creation?.ephemeral_1h_input_tokens ?? u.cache_write_1h_tokens ?? 0
  const written = u.cache_creation_input_tokens ?? 0
  return {
    uncached: u.input_tokens,
    w5m: written - h1,
    w1h: h1,
    read: u.cache_read_input_tokens ?? 0,
    out: u.output_tokens,
  }
}

/** Tokens from Responses usage (the mock's) or pair-loop's record of a codex call: cached ⊂ input. */
function openaiTokens(u) {
  const read = u.input_tokens_details?.cached_tokens ?? u.cached_input_tokens ?? 0
  const w5m = u.input_tokens_details?.cache_write_tokens ?? u.cache_creation_input_tokens ?? 0
  return { uncached: u.input_tokens - read - w5m, w5m, w1h: 0, read, out: u.output_tokens }
}

const total = (rows) =>
  rows.reduce(
    (a, b) => Object.fromEntries(KEYS.map((key) => [key, a[key] + b[key]])),
    Object.fromEntries(KEYS.map((key) => [key, 0])),
  )

function usd({ uncached, w5m, w1h, read, out }, rates) {
  return (
    (uncached * rates.input + w5m * rates.write_5m + w1h * rates.write_1h + read * rates.read + out * rates.output) /
    1e6
  )
}

/** Fresh input (uncached + written) and cached input (read). */
const split = (t) => ({ fresh: t.uncached + t.w5m + t.w1h, cached: t.read, out: t.out })

/** One round: what pair-loop recorded, what the mock billed (its calls summed, priced by hand), and whether they agree. */
export function roundFigures(tool, round) {
  const toTokens = tool === 'claude' ? anthropicTokens : openaiTokens
  const billed = total(round.billed.map(toTokens))
  const recorded = toTokens(round.recorded.usage)
  const billedUsd = usd(billed, RATES[MODELS[tool]])
  const agrees =
    KEYS.every((key) => billed[key] === recorded[key]) &&
    round.recorded.usd !== null &&
    Math.abs(round.recorded.usd - billedUsd) < 1e-9
  return {
    recorded: { ...split(recorded), usd: round.recorded.usd },
    billed: { ...split(billed), usd: billedUsd },
    calls: round.billed.length,
    seconds: round.seconds,
    check: agrees
      ? 'ok'
      : `recorded ${JSON.stringify(recorded)} $${round.recorded.usd} ≠ billed ${JSON.stringify(billed)} $${billedUsd}`,
  }
}

/** Rounds 2–3 of a loop, in USD, as recorded or as billed. */
const later = (loop, side) => loop.rounds.slice(1).reduce((sum, round) => sum + round[side].usd, 0)

/** Per round: the median of each figure over the runs. */
function roundMedians(loops) {
  return [0, 1, 2].map((i) => {
    const rounds = loops.map((loop) => loop.rounds[i])
    const med = (side, key) => median(rounds.map((round) => round[side][key]))
    const figures = (side) => ({
      fresh_in: med(side, 'fresh'),
      cached_in: med(side, 'cached'),
      out: med(side, 'out'),
      usd: med(side, 'usd'),
    })
    return {
      round: i + 1,
      recorded: figures('recorded'),
      billed: figures('billed'),
      calls: median(rounds.map((r) => r.calls)),
    }
  })
}

/** One reviewer's summary over the runs: `loops` holds each run's {fresh, resumed} loops. */
export function reviewerSummary(tool, loops) {
  const ratios = (side) => loops.map((loop) => later(loop.resumed, side) / later(loop.fresh, side))
  const ratio = { recorded: median(ratios('recorded')), billed: median(ratios('billed')) }
  const checks = loops.flatMap((loop) => [...loop.fresh.rounds, ...loop.resumed.rounds].map((round) => round.check))
  const sameSession = (sessions) => sessions[1] === sessions[0] && sessions[2] === sessions[1]
  return {
    model: MODELS[tool],
    fresh: roundMedians(loops.map((loop) => loop.fresh)),
    resumed: roundMedians(loops.map((loop) => loop.resumed)),
    ratio_rounds_2_3: ratio,
    ratios: { recorded: ratios('recorded'), billed: ratios('billed') },
    target_met: { recorded: ratio.recorded <= TARGET, billed: ratio.billed <= TARGET },
    sessions_as_asked: loops.every(
      (loop) => sameSession(loop.resumed.sessions) && new Set(loop.fresh.sessions).size === 3,
    ),
    recorded_equals_billed: checks.every((check) => check === 'ok'),
    mismatches: checks.filter((check) => check !== 'ok'),
  }
}
