#!/usr/bin/env node
// A long history (not a test): the commands that find "the run of this repository" with 10,000 runs of other
// repositories in the home, against the same commands in a home with none, measured alternately in one run.
// Target (issue 22): status, start, coder-done and stop-hook each within 1.2x (medians); status --all and
// report --all stated per run.
//
//   node bench/runs-index.mjs [--runs 10000] [--rounds 15] [--warmup 2] [--all-rounds 5] [--json]
//
// Runs the built CLI (dist/pair-loop.cjs; `npm run build` first) in temp git repositories with temp homes
// (PAIR_LOOP_HOME, HOME); nothing of the developer's is read or written. Each round, in each home: `start`, `status`,
// `coder-done` (after a one-file change), `stop-hook` (timed), then `finish --verdict ABANDONED` and the change
// removed (not timed), so both homes gain the same runs of their own repository.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI, option, requireBuilt, median, benchEnv } from './_util.mjs'

const OTHER_RUNS = option('runs', 10_000)
const ROUNDS = option('rounds', 15)
const WARMUP = option('warmup', 2)
const ALL_ROUNDS = option('all-rounds', 5)
const AS_JSON = process.argv.includes('--json')
const TARGET = 1.2

requireBuilt()

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-runs-')))

function run(command, args, { cwd, env, input }) {
  const begin = process.hrtime.bigint()
  const out = spawnSync(command, args, { cwd, env, input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  const ms = Number(process.hrtime.bigint() - begin) / 1e6
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stdout}${out.stderr}`)
  return { ms, stdout: out.stdout }
}

/** A home with one repository of its own (a commit, nothing else). */
function makeHome(name) {
  const home = join(scratch, name)
  const repo = join(scratch, `${name}-repo`)
  mkdirSync(home, { recursive: true })
  mkdirSync(repo, { recursive: true })
  const env = benchEnv(home)
  run('git', ['-c', 'init.defaultBranch=main', 'init', '-q'], { cwd: repo, env })
  writeFileSync(join(repo, 'README.md'), '# bench\n')
  run('git', ['add', '-A'], { cwd: repo, env })
  run('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial'], { cwd: repo, env })
  return { name, home, repo, env, runs: join(env.PAIR_LOOP_HOME, 'runs') }
}

const cli = (h, args, input) => run(process.execPath, [CLI, ...args], { cwd: h.repo, env: h.env, input })

/** One round of the loop's commands in a home: the four timed, the rest only to get back to a clean start. */
function round(h) {
  const start = cli(h, ['start', '--task', 'bench'])
  const runId = JSON.parse(start.stdout).run_id
  const status = cli(h, ['status'])
  writeFileSync(join(h.repo, 'change.txt'), `${runId}\n`)
  const coderDone = cli(h, ['coder-done', '--summary', 'a change'])
  const stopHook = cli(h, ['stop-hook'], JSON.stringify({ cwd: h.repo, stop_hook_active: false }))
  if (!JSON.parse(stopHook.stdout).decision) throw new Error(`stop-hook let the agent stop: ${stopHook.stdout}`)
  cli(h, ['finish', '--verdict', 'ABANDONED'])
  rmSync(join(h.repo, 'change.txt'))
  return { runId, ms: { start: start.ms, status: status.ms, 'coder-done': coderDone.ms, 'stop-hook': stopHook.ms } }
}

/** `count` finished runs of other repositories, cloned from a real one and written straight into runs/ (behind the
 * runs index's back: the first command after rebuilds it). */
function addOtherRuns(h, template, count) {
  const state = JSON.parse(readFileSync(join(h.runs, `${template}.json`), 'utf8'))
  const day = Date.parse('2024-01-01T00:00:00.000Z')
  for (let i = 0; i < count; i++) {
    const at = new Date(day + i * 600_000) // ten minutes apart: 10,000 runs span ten weeks
    const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
    const run_id = `${stamp}-${i.toString(16).padStart(6, '0')}`
    const created_at = at.toISOString()
    const other = { ...state, run_id, repo: `/work/elsewhere/project-${i % 200}`, created_at, updated_at: created_at }
    writeFileSync(join(h.runs, `${run_id}.json`), `${JSON.stringify(other, null, 2)}\n`, { mode: 0o600 })
    // a finished run has its folder beside its state (the PR body, a review's raw output): runs/ lists both
    mkdirSync(join(h.runs, run_id))
    writeFileSync(join(h.runs, run_id, 'pr-body.md'), '# bench\n')
  }
}

const COMMANDS = ['status', 'start', 'coder-done', 'stop-hook']
let results
try {
  const one = makeHome('one')
  const many = makeHome('many')
  const first = round(many) // a real finished run to clone
  addOtherRuns(many, first.runId, OTHER_RUNS)
  round(one)
  const firstAfter = cli(many, ['status']).ms // the first command after the runs were written behind its back

  const samples = { one: {}, many: {} }
  for (const name of ['one', 'many']) for (const c of COMMANDS) samples[name][c] = []
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    // alternate which home goes first, so that machine noise hits both alike
    for (const h of i % 2 === 0 ? [one, many] : [many, one]) {
      const { ms } = round(h)
      if (i >= WARMUP) for (const c of COMMANDS) samples[h.name][c].push(ms[c])
    }
  }
  const all = { one: { status: [], report: [] }, many: { status: [], report: [] } }
  let pageBytes = 0
  for (let i = 0; i < ALL_ROUNDS + 1; i++) {
    for (const h of i % 2 === 0 ? [one, many] : [many, one]) {
      const status = cli(h, ['status', '--all'])
      const out = join(scratch, `${h.name}-all.html`)
      const report = cli(h, ['report', '--all', '--out', out])
      if (h === many) pageBytes = statSync(out).size
      if (i === 0) continue // warm-up
      all[h.name].status.push(status.ms)
      all[h.name].report.push(report.ms)
    }
  }
  const rows = COMMANDS.map((c) => {
    const base = median(samples.one[c])
    const long = median(samples.many[c])
    return { command: c, one_ms: base, many_ms: long, ratio: long / base }
  })
  const perRun = (kind) => {
    const base = median(all.one[kind])
    const long = median(all.many[kind])
    return { one_ms: base, many_ms: long, per_run_ms: (long - base) / OTHER_RUNS }
  }
  results = {
    node: process.version,
    other_runs: OTHER_RUNS,
    rounds: ROUNDS,
    warmup: WARMUP,
    first_status_after_writing_ms: firstAfter,
    commands: rows,
    all: { status: perRun('status'), report: perRun('report'), report_page_bytes: pageBytes },
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

if (AS_JSON) {
  console.log(JSON.stringify(results, null, 2))
  process.exit(0)
}

const ms = (value) => `${value.toFixed(1)} ms`
const x = (value) => `${value.toFixed(2)}×`
console.log(
  `pair-loop with ${OTHER_RUNS} runs of other repositories, ${ROUNDS} rounds (+${WARMUP} warm-up) alternating, node ${process.version}`,
)
console.log(`first status after the runs were written behind its back: ${ms(results.first_status_after_writing_ms)}`)
console.log('')
console.log(
  `| command | home with its own runs only | + ${OTHER_RUNS} other runs | ratio (median) | target ≤ ${TARGET}× |`,
)
console.log('|---|---|---|---|---|')
for (const r of results.commands)
  console.log(
    `| \`${r.command}\` | ${ms(r.one_ms)} | ${ms(r.many_ms)} | ${x(r.ratio)} | ${r.ratio <= TARGET ? 'met' : 'NOT met'} |`,
  )
console.log('')
for (const kind of ['status', 'report'])
  console.log(
    `${kind} --all: ${ms(results.all[kind].one_ms)} → ${ms(results.all[kind].many_ms)}: ${(results.all[kind].per_run_ms * 1000).toFixed(0)} µs a run (median of ${ALL_ROUNDS})`,
  )
console.log(
  `report --all page with ${OTHER_RUNS + 1 + WARMUP + ROUNDS} runs: ${(results.all.report_page_bytes / 1e6).toFixed(2)} MB`,
)
