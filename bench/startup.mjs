#!/usr/bin/env node
// Start-up cost of the CLI (not a test): wall time of `pair-loop status --run <id>` and `pair-loop codes`
// against `node -e 0`, measured alternately in one run so that machine noise hits all three alike.
// Target (issue 2): at most 2.5x `node -e 0`.
//
//   node bench/startup.mjs [--rounds 30] [--warmup 3] [--json]
//
// Runs the built CLI (dist/pair-loop.cjs; `npm run build` first) against a run it starts in a temp
// git repository with a temp PAIR_LOOP_HOME and HOME; nothing of the developer's is read or written.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI, option, requireBuilt, benchEnv } from './_util.mjs'

const ROUNDS = option('rounds', 30)
const WARMUP = option('warmup', 3)
const AS_JSON = process.argv.includes('--json')

requireBuilt()

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-')))
const home = join(scratch, 'home')
const repo = join(scratch, 'repo')
const env = benchEnv(home)

function must(command, args, cwd) {
  const out = spawnSync(command, args, { cwd, env, encoding: 'utf8' })
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stderr}`)
  return out.stdout
}

function setup() {
  must('mkdir', ['-p', repo, home], scratch)
  must('git', ['-c', 'init.defaultBranch=main', 'init', '-q'], repo)
  writeFileSync(join(repo, 'README.md'), '# bench\n')
  must('git', ['add', '-A'], repo)
  must('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial'], repo)
  const started = JSON.parse(must(process.execPath, [CLI, 'start', '--task', 'startup bench'], repo))
  if (!started.run_id) throw new Error(`start printed no run_id: ${JSON.stringify(started)}`)
  return started.run_id
}

const runId = setup()
const subjects = [
  { name: 'node -e 0', label: '`node -e 0`', args: ['-e', '0'] },
  { name: 'status', label: '`pair-loop status --run <id>`', args: [CLI, 'status', '--run', runId] },
  { name: 'codes', label: '`pair-loop codes`', args: [CLI, 'codes'] },
]

function once(subject) {
  const begin = process.hrtime.bigint()
  const out = spawnSync(process.execPath, subject.args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - begin) / 1e6
  if (out.status !== 0) throw new Error(`${subject.name} exited ${out.status}: ${out.stderr}`)
  return ms
}

const samples = Object.fromEntries(subjects.map((s) => [s.name, []]))
try {
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // rotate the order each round, so no subject always runs first (or right after another)
    for (let i = 0; i < subjects.length; i++) {
      const subject = subjects[(round + i) % subjects.length]
      const ms = once(subject)
      if (round >= WARMUP) samples[subject.name].push(ms)
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  const high = Math.ceil(at)
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low)
}

const stats = subjects.map((s) => ({
  name: s.name,
  label: s.label,
  median: quantile(samples[s.name], 0.5),
  p90: quantile(samples[s.name], 0.9),
  min: Math.min(...samples[s.name]),
}))
const base = stats[0]
for (const s of stats) {
  s.ratio = s.median / base.median
  s.ratio_p90 = s.p90 / base.p90
}

if (AS_JSON) {
  console.log(
    JSON.stringify(
      {
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        rounds: ROUNDS,
        warmup: WARMUP,
        results: stats,
      },
      null,
      2,
    ),
  )
  process.exit(0)
}

const ms = (value) => `${value.toFixed(1)} ms`
const x = (value) => `${value.toFixed(2)}×`
console.log(
  `pair-loop start-up, ${ROUNDS} rounds (+${WARMUP} warm-up) alternating, node ${process.version}, ${process.platform}-${process.arch}`,
)
console.log('')
for (const s of stats) {
  console.log(
    `${s.name.padEnd(10)} median ${ms(s.median).padStart(9)}  p90 ${ms(s.p90).padStart(9)}  min ${ms(s.min).padStart(9)}  ratio ${x(s.ratio)} (p90 ${x(s.ratio_p90)})`,
  )
}
const worst = Math.max(...stats.slice(1).map((s) => s.ratio))
console.log('')
console.log(`target ≤ 2.50× node -e 0: ${worst <= 2.5 ? 'met' : 'NOT met'} (worst median ratio ${x(worst)})`)
console.log('')
console.log('Markdown for docs/performance.md:')
console.log('')
console.log('| command | median | p90 | × `node -e 0` (median) |')
console.log('|---|---|---|---|')
for (const s of stats) console.log(`| ${s.label} | ${ms(s.median)} | ${ms(s.p90)} | ${x(s.ratio)} |`)
console.log('')
console.log('One row for a history table (date | node | base | ratios):')
console.log('')
console.log(
  `| ${new Date().toISOString().slice(0, 10)} | node ${process.version} | \`node -e 0\` ${ms(base.median)} | status ${x(stats[1].ratio)} | codes ${x(stats[2].ratio)} |`,
)
