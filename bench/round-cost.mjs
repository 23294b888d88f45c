#!/usr/bin/env node
// What continuity saves (issue 36), not a test: the same three-round loop (round 1 CHANGES_REQUESTED, replies and a
// fix, round 2 CHANGES_REQUESTED, a reply and a fix, round 3 APPROVED) through the built pair-loop CLI with the real
// `claude` and `codex` as reviewers, on the mock model API billing prompt caching the way the providers do
// (MOCK_BILL_CACHE=1: how it decides is in test/e2e/mock-billing.mjs's header), once with fresh reviewer sessions
// (`reviewer_resume_s: 0`) and once with the default (round N ≥ 2 continues the last round's session).
// Per round: the input tokens (fresh, cached) and USD pair-loop recorded on the run's rounds, each checked against
// what the mock billed (its calls in that round, priced by hand at the rates in bench/_round-figures.mjs). Medians
// over --runs; the ratio is taken within each run (rounds 2–3 resumed USD / the same rounds fresh), per reviewer,
// from the record and from the bill, then its median. Target: ≤ 0.4.
//
//   node bench/round-cost.mjs [--runs 5] [--kb 16] [--warm-s 300] [--reviewers claude,codex] [--json]
//
// --kb: the size of the change's new file (KiB, the bulk of the diff); --warm-s: the mock's warm window. Each loop has
// its own mock (no cache shared between loops), home and repository, in temp folders removed after it
// (PAIR_LOOP_BENCH_KEEP=1 keeps them, with the request bodies); fresh and resumed alternate which goes first. Needs
// `npm run build` and the real CLIs (node test/e2e/setup.mjs; PAIR_LOOP_E2E_CLI_DIR moves them). Each real call
// takes 1–2 s: about 15 s a loop, 4 loops a run. Prints a table (progress on stderr) and one JSON line.
import { existsSync } from 'node:fs'
import { CLAUDE_BIN, CODEX_BIN } from '../test/e2e/setup.mjs'
import { TARGET, reviewerSummary, roundFigures } from './_round-figures.mjs'
import { MODELS, roundLoop } from './_round-loop.mjs'
import { option, requireBuilt } from './_util.mjs'

const RUNS = option('runs', 5)
const KB = option('kb', 16)
const WARM_S = option('warm-s', 300)
const AS_JSON = process.argv.includes('--json')
const at = process.argv.indexOf('--reviewers')
const REVIEWERS = at === -1 ? ['claude', 'codex'] : process.argv[at + 1].split(',')

async function main() {
  requireBuilt()
  for (const bin of [CLAUDE_BIN, CODEX_BIN])
    if (!existsSync(bin))
      throw new Error(`${bin} is missing: run \`node test/e2e/setup.mjs\` (or set PAIR_LOOP_E2E_CLI_DIR)`)
  const runs = []
  for (let run = 0; run < RUNS; run++) {
    const modes = run % 2 ? ['resumed', 'fresh'] : ['fresh', 'resumed'] // which goes first alternates
    const byReviewer = {}
    for (const tool of REVIEWERS) {
      byReviewer[tool] = {}
      for (const mode of modes) {
        const loop = await roundLoop({ tool, resumeS: mode === 'fresh' ? 0 : null, kb: KB, warmS: WARM_S })
        byReviewer[tool][mode] = {
          rounds: loop.rounds.map((round) => roundFigures(tool, round)),
          sessions: loop.sessions,
        }
        if (!AS_JSON)
          process.stderr.write(`run ${run + 1}/${RUNS} ${tool} ${mode}: ${describeLoop(byReviewer[tool][mode])}\n`)
      }
    }
    runs.push(byReviewer)
  }
  const summary = Object.fromEntries(
    REVIEWERS.map((tool) => [
      tool,
      reviewerSummary(
        tool,
        runs.map((run) => run[tool]),
      ),
    ]),
  )
  if (!AS_JSON) printTable(summary)
  const line = { bench: 'round-cost', runs: RUNS, kb: KB, warm_s: WARM_S, target: TARGET }
  for (const tool of REVIEWERS) {
    const { mismatches: _, ...rest } = summary[tool]
    line[tool] = rest
  }
  console.log(JSON.stringify(line))
}

function describeLoop({ rounds, sessions }) {
  const cost = rounds.map((r) => `$${r.recorded.usd?.toFixed(5)} (billed $${r.billed.usd.toFixed(5)})`).join(' ')
  const continued = sessions.slice(1).filter((id, i) => id === sessions[i]).length
  const checks = rounds.map((r) => (r.check === 'ok' ? 'ok' : 'MISMATCH')).join(' ')
  return `${cost}; ${continued} of 2 later rounds continued a session; recorded = billed: ${checks}`
}

const tokens = (f) => `${f.fresh_in} / ${f.cached_in}`
const same = (a, b) => a.fresh_in === b.fresh_in && a.cached_in === b.cached_in && a.out === b.out

function printTable(summary) {
  const rows = [
    '| reviewer | sessions | round | input fresh / cached | output | USD recorded | USD billed |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const tool of REVIEWERS)
    for (const mode of ['fresh', 'resumed'])
      for (const { round, recorded, billed } of summary[tool][mode]) {
        const input = same(recorded, billed) ? tokens(recorded) : `${tokens(recorded)} (billed ${tokens(billed)})`
        const out = recorded.out === billed.out ? recorded.out : `${recorded.out} (billed ${billed.out})`
        rows.push(
          `| ${tool} (${MODELS[tool]}) | ${mode} | ${round} | ${input} | ${out} | $${recorded.usd.toFixed(5)} | $${billed.usd.toFixed(5)} |`,
        )
      }
  console.log(`Medians of ${RUNS} runs, a ${KB} KiB change, warm window ${WARM_S} s:\n\n${rows.join('\n')}\n`)
  for (const tool of REVIEWERS) {
    const s = summary[tool]
    const runs = (side) => s.ratios[side].map((r) => r.toFixed(3)).join(', ')
    const met = (side) => (s.target_met[side] ? 'met' : 'NOT met')
    console.log(
      `${tool}: rounds 2–3 resumed / fresh USD = ${s.ratio_rounds_2_3.recorded.toFixed(3)} recorded (runs ${runs('recorded')}; target ≤ ${TARGET} ${met('recorded')}), ` +
        `${s.ratio_rounds_2_3.billed.toFixed(3)} billed (runs ${runs('billed')}; ${met('billed')}); ` +
        `recorded = billed: ${s.recorded_equals_billed ? 'yes' : `NO, ${s.mismatches.length} rounds`}; sessions as asked: ${s.sessions_as_asked ? 'yes' : 'NO'}`,
    )
  }
  for (const tool of REVIEWERS) {
    const counts = new Map()
    for (const m of summary[tool].mismatches) counts.set(m, (counts.get(m) ?? 0) + 1)
    for (const [m, n] of counts) console.log(`  ${tool}, ${n}×: ${m}`)
  }
}

await main()
