#!/usr/bin/env node
// The test suite's own time (issue 19), not a test: `npm test` of this checkout against `npm test` of an earlier commit
// (default 95af4be, main before the renovation), each in a clean worktree of its own (npm ci, which builds dist/),
// run one after the other, --rounds times each in turn: wall, CPU of the process tree, and CPU of the whole machine.
//
//   node bench/suite.mjs [--before REV] [--rounds 1] [--keep] [--json]
//
// Both runs get the same environment, CI unset (a local run). Quote it with the load average printed beside it:
// two cores shared with anything else make every figure longer. --keep leaves the worktrees (under $TMPDIR) for
// another look; they are otherwise removed.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, option, ROOT } from './_util.mjs'

const at = process.argv.indexOf('--before')
const BEFORE = at === -1 ? '95af4be' : process.argv[at + 1]
const ROUNDS = option('rounds', 1)
const AS_JSON = process.argv.includes('--json')

const sh = (command, args, cwd, extra = {}) => {
  const out = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28, ...extra })
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${out.stderr.slice(-2000)}`)
  return out.stdout
}

/** A clean worktree of `rev` with its own install and build. */
function checkout(rev, label) {
  const dir = join(realpathSync(mkdtempSync(join(tmpdir(), `pair-loop-suite-${label}-`))), 'repo')
  sh('git', ['worktree', 'add', '--detach', dir, rev], ROOT)
  process.stderr.write(`${label}: ${rev} in ${dir}: npm ci\n`)
  sh('npm', ['ci', '--no-audit', '--no-fund'], dir, { stdio: ['ignore', 'ignore', 'pipe'] })
  return dir
}

/** The machine's busy CPU seconds so far (user, nice, system, irq, softirq of /proc/stat); null off Linux. */
function machineBusy() {
  try {
    const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    return (user + nice + system + irq + softirq) / 100
  } catch {
    return null
  }
}

/**
 * One `npm test`: wall seconds; CPU seconds of the process tree (GNU time: only what its processes waited for, so a
 * program whose parent ended first, as the spawn server's do, is missed) and of the whole machine over the run (the
 * honest figure when nothing else runs); and vitest's count of tests.
 */
function timed(dir) {
  const env = { ...process.env }
  delete env.CI
  const busyBefore = machineBusy()
  const started = performance.now()
  const out = spawnSync('/usr/bin/time', ['-f', '%U %S', 'npm', 'test', '--', '--reporter=dot'], {
    cwd: dir,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  })
  const wall = (performance.now() - started) / 1000
  const busy = busyBefore === null ? null : machineBusy() - busyBefore
  const [user, system] = out.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  const plain = out.stdout.replace(/\x1b\[[0-9;]*m/g, '')
  const tests = /Tests\s+(?:\S+\s+)*?(\d+) passed/.exec(plain)?.[1]
  // a failed run's failures named, not only its exit status
  for (const line of new Set(plain.split('\n').filter((l) => /^\s*FAIL\s/.test(l))))
    process.stderr.write(`${line.trim()}\n`)
  return { wall, cpu: user + system, busy, tests: Number(tests ?? 0), exit: out.status, load: loadavg()[0] }
}

const dirs = { before: checkout(BEFORE, 'before'), after: checkout('HEAD', 'after') }
const runs = { before: [], after: [] }
try {
  for (let round = 0; round < ROUNDS; round++)
    for (const label of ['before', 'after']) {
      const run = timed(dirs[label])
      runs[label].push(run)
      process.stderr.write(
        `${label}: ${run.wall.toFixed(1)} s wall, ${run.cpu.toFixed(1)} s CPU, ${run.busy?.toFixed(1) ?? '-'} s machine CPU, ${run.tests} tests, exit ${run.exit}, load ${run.load.toFixed(2)}\n`,
      )
    }
} finally {
  if (!process.argv.includes('--keep'))
    for (const dir of Object.values(dirs)) {
      spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT })
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
}

const summary = Object.fromEntries(
  Object.entries(runs).map(([label, list]) => [
    label,
    {
      wall_s: median(list.map((run) => run.wall)),
      cpu_s: median(list.map((run) => run.cpu)),
      machine_cpu_s: list[0].busy === null ? null : median(list.map((run) => run.busy)),
      tests: list[0].tests,
    },
  ]),
)
const ratio = summary.after.wall_s / summary.before.wall_s
const cpuOf = (run) => `${run.cpu_s.toFixed(0)} s CPU, ${run.machine_cpu_s?.toFixed(0) ?? '-'} s machine CPU`
if (AS_JSON) console.log(JSON.stringify({ before_rev: BEFORE, ...summary, wall_ratio: ratio }))
else
  console.log(
    `npm test: ${BEFORE} ${summary.before.wall_s.toFixed(1)} s wall (${cpuOf(summary.before)}, ${summary.before.tests} tests); ` +
      `HEAD ${summary.after.wall_s.toFixed(1)} s wall (${cpuOf(summary.after)}, ${summary.after.tests} tests): ${ratio.toFixed(2)}x`,
  )
