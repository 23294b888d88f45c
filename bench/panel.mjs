#!/usr/bin/env node
// The panel (issue 35, item 3), one figure (not a test): the wall time of `review` for a two-member panel (claude and
// codex, fake CLIs that answer after --fast and --slow ms) against `review` with the slower member alone, alternating,
// each in a fresh run. Target: the panel at most 1.15× the slower member alone (its members run at once). Also
// pair-loop's overhead per member: (panel − slow) / 2, the time a review takes past its slowest reviewer's own.
//
//   node bench/panel.mjs [--rounds 5] [--fast 1000] [--slow 1500] [--json]
//
// Runs the built CLI (dist/pair-loop.cjs, `npm run build` first) in temp git repositories with a temp PAIR_LOOP_HOME
// and HOME; nothing of the developer's is read or written.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI, benchEnv, median, option, requireBuilt } from './_util.mjs'

const ROUNDS = option('rounds', 5)
const FAST_MS = option('fast', 1000)
const SLOW_MS = option('slow', 1500)
const AS_JSON = process.argv.includes('--json')

requireBuilt()
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-panel-')))

/** A vendor CLI that answers like `claude -p --output-format json` after `ms`. */
function fakeVendor(tool, ms) {
  const bin = join(scratch, tool)
  writeFileSync(
    bin,
    `#!/usr/bin/env node
if (process.argv.includes('--help')) process.exit(0)
require('fs').readFileSync(0, 'utf8')
setTimeout(() => console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false,
  result: 'Fine.\\n\\nVERDICT: APPROVED', session_id: '${tool}-bench', total_cost_usd: 0.001 })), ${ms})
`,
  )
  chmodSync(bin, 0o755)
  return bin
}
const bins = { claude: fakeVendor('claude', FAST_MS), codex: fakeVendor('codex', SLOW_MS) }

let homes = 0
/** A home whose person's config names the fakes (and the panel, when `panel`), and a run in `reviewing` under it. */
function runInReview(panel) {
  const n = ++homes
  const home = join(scratch, `home-${n}`)
  const env = benchEnv(home)
  mkdirSync(env.PAIR_LOOP_HOME, { recursive: true })
  const pairLoop = {
    claude_bin: bins.claude,
    codex_bin: bins.codex,
    ...(panel ? { reviewers: ['claude', 'codex'] } : {}),
  }
  writeFileSync(join(env.PAIR_LOOP_HOME, 'config.json'), JSON.stringify({ pair_loop: pairLoop }))
  const repo = join(scratch, `repo-${n}`)
  mkdirSync(repo)
  const must = (command, args) => {
    const out = spawnSync(command, args, { cwd: repo, env, encoding: 'utf8' })
    if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stderr}`)
  }
  must('git', ['-c', 'init.defaultBranch=main', 'init', '-q'])
  writeFileSync(join(repo, 'a.txt'), 'one\n')
  must('git', ['add', '-A'])
  must('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial'])
  must(process.execPath, [
    CLI,
    'start',
    '--task',
    'panel bench',
    '--coder',
    'gemini',
    '--reviewer',
    panel ? 'claude' : 'codex',
  ])
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  must(process.execPath, [CLI, 'coder-done', '--summary', 'two'])
  return { repo, env }
}

function timedReview(panel) {
  const { repo, env } = runInReview(panel)
  const begin = process.hrtime.bigint()
  const out = spawnSync(process.execPath, [CLI, 'review', '--wait', '120'], { cwd: repo, env, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - begin) / 1e6
  const doc = JSON.parse(out.stdout)
  if (doc.verdict !== 'APPROVED' || (panel && doc.panel?.length !== 2))
    throw new Error(`review did not approve as expected: ${out.stdout} ${out.stderr}`)
  return ms
}

try {
  const panel = []
  const alone = []
  timedReview(true) // warm-up: the caches of a first run
  for (let round = 0; round < ROUNDS; round++) {
    panel.push(timedReview(true))
    alone.push(timedReview(false))
  }
  const result = {
    rounds: ROUNDS,
    fast_ms: FAST_MS,
    slow_ms: SLOW_MS,
    panel_median_ms: Math.round(median(panel)),
    slower_alone_median_ms: Math.round(median(alone)),
    ratio: Number((median(panel) / median(alone)).toFixed(3)),
    target_ratio: 1.15,
    overhead_per_member_ms: Math.round((median(panel) - SLOW_MS) / 2),
    load_average: loadavg().map((x) => Number(x.toFixed(2))),
  }
  if (AS_JSON) console.log(JSON.stringify(result))
  else
    console.log(
      [
        `panel of two (claude ${FAST_MS} ms, codex ${SLOW_MS} ms): median ${result.panel_median_ms} ms over ${ROUNDS} rounds`,
        `the slower member alone: median ${result.slower_alone_median_ms} ms`,
        `ratio ${result.ratio} (target ≤ ${result.target_ratio}); pair-loop's overhead per member ${result.overhead_per_member_ms} ms`,
        `load average ${result.load_average.join(' ')}`,
      ].join('\n'),
    )
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
