#!/usr/bin/env node
// The detached review (issue 18), two figures (not a test):
//   1. the wait bound: `review --wait W` returns within W + 1 s whatever the reviewer does (it hangs, drips a line a
//      second, starts a child and hangs), median and worst of --rounds; each review is then ended with --cancel;
//   2. the worker's overhead: the whole `review` with a stub that answers at once, against the foreground `review` of
//      the commit before the worker (built from git into a temp folder), alternating, in a fresh run each time.
//      Target: at most 100 ms more.
//
//   node bench/review-wait.mjs [--rounds 20] [--warmup 2] [--wait 2] [--baseline REV | --baseline-cli PATH]
//                              [--cli PATH] [--overhead-only] [--json]
//
// Runs the built CLI (dist/pair-loop.cjs, `npm run build` first; or --cli PATH, another build) in temp git
// repositories with a temp PAIR_LOOP_HOME and HOME; nothing of the developer's is read or written. REV defaults to the
// parent of the commit that added lib/review/worker.ts (--baseline-cli: a build of it already made). --overhead-only
// skips the first figure. The added time is also given paired (the median of each round's difference, the two
// reviews run one after the other) and with the load average: the worker's start-up is hidden only while a core is
// free for it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { CLI as BUILT_CLI, ROOT, benchEnv, option, requireBuilt } from './_util.mjs'

const CLI = process.argv.includes('--cli') ? resolve(process.argv[process.argv.indexOf('--cli') + 1]) : BUILT_CLI
const STUBS = join(ROOT, 'fixtures', 'reviewers')

const ROUNDS = option('rounds', 20, { min: 0 })
const WARMUP = option('warmup', 2, { min: 0 })
const WAIT_S = option('wait', 2, { min: 0 })
const AS_JSON = process.argv.includes('--json')
const OVERHEAD_ONLY = process.argv.includes('--overhead-only')
const BASELINE = process.argv.includes('--baseline') ? process.argv[process.argv.indexOf('--baseline') + 1] : null
const BASELINE_CLI = process.argv.includes('--baseline-cli')
  ? resolve(process.argv[process.argv.indexOf('--baseline-cli') + 1])
  : null

requireBuilt(CLI)

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-review-')))
const home = join(scratch, 'home')
const env = benchEnv(home)

function must(command, args, cwd, options = {}) {
  const out = spawnSync(command, args, { cwd, env, encoding: 'utf8', ...options })
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stderr}`)
  return out.stdout
}

let repos = 0
/** A fresh repository whose run (started by `cli`) is in `reviewing`. */
function runInReview(cli) {
  const repo = join(scratch, `repo-${++repos}`)
  mkdirSync(repo, { recursive: true })
  must('git', ['-c', 'init.defaultBranch=main', 'init', '-q'], repo)
  writeFileSync(join(repo, 'a.txt'), 'one\n')
  must('git', ['add', '-A'], repo)
  must('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial'], repo)
  must(process.execPath, [cli, 'start', '--task', 'review bench'], repo)
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  must(process.execPath, [cli, 'coder-done', '--summary', 'two'], repo)
  return repo
}

function timed(args, cwd) {
  const begin = process.hrtime.bigint()
  const out = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  return { ms: Number(process.hrtime.bigint() - begin) / 1e6, out }
}

/** The commit before the worker, built once into a temp folder (node_modules borrowed from this checkout). */
function buildBaseline() {
  const added = must('git', ['log', '--diff-filter=A', '--format=%H', '--', 'lib/review/worker.ts'], ROOT).trim()
  // not committed yet: HEAD is still the foreground review
  const rev = BASELINE ?? (added ? `${added.split('\n').at(-1)}^` : 'HEAD')
  const dir = join(scratch, 'baseline')
  mkdirSync(dir)
  const archive = spawnSync('git', ['archive', rev], { cwd: ROOT, maxBuffer: 1 << 30 })
  if (archive.status !== 0) throw new Error(`git archive ${rev}: ${archive.stderr}`)
  must('tar', ['-x', '-C', dir], ROOT, { input: archive.stdout, encoding: undefined })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  must(process.execPath, [join(ROOT, 'node_modules', 'unbuild', 'dist', 'cli.mjs')], dir)
  return { rev: must('git', ['rev-parse', '--short', rev], ROOT).trim(), cli: join(dir, 'dist', 'pair-loop.cjs') }
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  return sorted[Math.floor(at)] + (sorted[Math.ceil(at)] - sorted[Math.floor(at)]) * (at - Math.floor(at))
}

const reviewer = (stub) => JSON.stringify(['sh', join(STUBS, `${stub}.sh`)])
const BEHAVIOURS = ['hang', 'slow-drip', 'spawns-child']

try {
  // 1. the wait bound, on one run: each review is cancelled before the next
  const waits = []
  const load = { start: loadavg()[0] }
  const repo = OVERHEAD_ONLY ? null : runInReview(CLI)
  for (let round = 0; repo && round < ROUNDS; round++) {
    const stub = BEHAVIOURS[round % BEHAVIOURS.length]
    const { ms, out } = timed([CLI, 'review', '--reviewer-cmd', reviewer(stub), '--wait', String(WAIT_S)], repo)
    if (out.status !== 0 || !JSON.parse(out.stdout).in_progress)
      throw new Error(`review --wait ${WAIT_S} (${stub}) did not print the in-flight document: ${out.stdout}`)
    waits.push({ stub, ms })
    if (process.argv.includes('--verbose')) process.stderr.write(`wait ${round + 1}: ${stub} ${ms.toFixed(0)} ms\n`)
    must(process.execPath, [CLI, 'review', '--cancel'], repo)
  }

  // 2. the worker's overhead, against the foreground review of the commit before it
  const baseline = BASELINE_CLI ? { rev: BASELINE_CLI, cli: BASELINE_CLI } : buildBaseline()
  const subjects = [
    { name: 'baseline', cli: baseline.cli, samples: [] },
    { name: 'detached', cli: CLI, samples: [] },
  ]
  // a bare Node start-up in the same rounds: what the worker's own start costs on this machine, at this moment
  const bare = []
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const start = timed(['-e', '0'], scratch).ms
    if (round >= WARMUP) bare.push(start)
    for (let i = 0; i < subjects.length; i++) {
      const subject = subjects[(round + i) % subjects.length]
      const dir = runInReview(subject.cli)
      const { ms, out } = timed([subject.cli, 'review', '--reviewer-cmd', reviewer('approve')], dir)
      if (out.status !== 0 || JSON.parse(out.stdout).verdict !== 'APPROVED')
        throw new Error(`${subject.name} review did not approve: ${out.stdout}${out.stderr}`)
      if (round >= WARMUP) subject.samples.push(ms)
    }
  }

  load.end = loadavg()[0]
  const bound =
    waits.length === 0
      ? null
      : {
          wait_s: WAIT_S,
          median_ms: quantile(
            waits.map((w) => w.ms),
            0.5,
          ),
          worst_ms: Math.max(...waits.map((w) => w.ms)),
          over_wait_worst_ms: Math.max(...waits.map((w) => w.ms)) - WAIT_S * 1000,
        }
  const [old, detached] = subjects.map((s) => ({
    median_ms: quantile(s.samples, 0.5),
    p90_ms: quantile(s.samples, 0.9),
  }))
  const [before, after] = subjects.map((s) => s.samples)
  const overhead = {
    baseline: baseline.rev,
    baseline_median_ms: old.median_ms,
    detached_median_ms: detached.median_ms,
    added_ms: detached.median_ms - old.median_ms,
    ratio: detached.median_ms / old.median_ms,
    paired_added_median_ms: quantile(
      after.map((ms, i) => ms - before[i]),
      0.5,
    ),
    node_e0_median_ms: quantile(bare, 0.5),
    baseline_p90_ms: old.p90_ms,
    detached_p90_ms: detached.p90_ms,
  }
  const result = { node: process.version, rounds: ROUNDS, warmup: WARMUP, load_average: load, bound, overhead }
  if (AS_JSON) console.log(JSON.stringify(result, null, 2))
  else {
    const ms = (value) => `${value.toFixed(0)} ms`
    console.log(
      `node ${process.version}, load average ${load.start.toFixed(1)} at the start, ${load.end.toFixed(1)} at the end`,
    )
    if (bound) {
      console.log(`review --wait ${WAIT_S}, ${ROUNDS} reviews (${BEHAVIOURS.join(', ')} in turn):`)
      console.log(
        `  returned in ${ms(bound.median_ms)} median, ${ms(bound.worst_ms)} worst (wait + ${ms(bound.over_wait_worst_ms)} at worst; target wait + 1000 ms)`,
      )
    }
    console.log(`review with a stub that answers at once, ${ROUNDS} rounds (+${WARMUP} warm-up) alternating:`)
    console.log(`  foreground (${baseline.rev}): ${ms(old.median_ms)} median, ${ms(old.p90_ms)} p90`)
    console.log(`  detached worker:        ${ms(detached.median_ms)} median, ${ms(detached.p90_ms)} p90`)
    const bareUnits = (overhead.added_ms / overhead.node_e0_median_ms).toFixed(2)
    console.log(
      `  added: ${ms(overhead.added_ms)} (${overhead.ratio.toFixed(2)}×; target at most 100 ms more), ${bareUnits}× a bare \`node -e 0\` (${ms(overhead.node_e0_median_ms)} median here)`,
    )
    console.log(`  added, paired (median of each round's difference): ${ms(overhead.paired_added_median_ms)}`)
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
