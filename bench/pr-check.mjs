#!/usr/bin/env node
// A big PR (not a test): pr-check against the stateful fake GitHub (fixtures/gh) holding a PR of 3,000 review threads
// (most resolved, some answered and left open, some to answer), conversation comments and reviews. It checks that the
// tick prints one document however big the PR, and measures a tick with nothing new against the gh calls it makes.
// Target (issue 20): a tick with nothing new within 2x the time of its gh calls (medians over the ticks).
//
//   node bench/pr-check.mjs [--threads 3000] [--ticks 7] [--json]
//
// Runs the built CLI (dist/pair-loop.cjs; `npm run build` first) in a temp git repository with a temp home; nothing
// of the developer's is read or written. The gh on PATH is a bash wrapper that stamps each call's start and end
// ($EPOCHREALTIME, no extra process) around the fake (node, as a real gh is a process of its own): the sum of those
// spans is "the gh calls' time"; the rest of the tick is pair-loop's.
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI, ROOT, option, requireBuilt, median, benchEnv } from './_util.mjs'

const FAKE = join(ROOT, 'fixtures', 'gh', 'fake-gh.cjs')

const THREADS = option('threads', 3000)
const TICKS = option('ticks', 7)
const AS_JSON = process.argv.includes('--json')
const TARGET = 2

requireBuilt()

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-pr-')))
const home = join(scratch, 'home')
const repo = join(scratch, 'repo')
const ghDir = join(scratch, 'gh')
const binDir = join(scratch, 'bin')
for (const dir of [home, repo, ghDir, binDir]) mkdirSync(dir, { recursive: true })

const env = benchEnv(home, {
  PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  TZ: 'UTC',
  FAKE_GH_DIR: ghDir,
  FAKE_GH_WORLD: join(ghDir, 'world.json'),
})
const TIMES = join(ghDir, 'times.log')
writeFileSync(
  join(binDir, 'gh'),
  `#!/bin/bash\nstart=$EPOCHREALTIME\nnode ${JSON.stringify(FAKE)} "$@"\nrc=$?\necho "$start $EPOCHREALTIME" >> ${JSON.stringify(TIMES)}\nexit $rc\n`,
)
chmodSync(join(binDir, 'gh'), 0o755)

function run(argv, options = {}) {
  const out = spawnSync(argv[0], argv.slice(1), { cwd: repo, env, encoding: 'utf8', maxBuffer: 1 << 30, ...options })
  if (out.status !== 0)
    throw new Error(`${argv.join(' ')} failed (${out.status}): ${out.stderr}${out.stdout.slice(0, 2000)}`)
  return out
}
const git = (...args) => run(['git', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args])
const cli = (...args) => run([process.execPath, CLI, ...args])

// ---------------------------------------------------------------- the PR

const at = (minutes) => new Date(Date.parse('2026-01-10T10:00:00Z') + minutes * 60_000).toISOString()
const BOT = 'coderabbitai[bot]'
const ME = 'me'
let nextId = 100_000
const threadComment = (author, body, minutes) => {
  const id = nextId++
  return {
    id: `PRRC_${id}`,
    database_id: id,
    author,
    author_type: author.endsWith('[bot]') ? 'Bot' : 'User',
    body,
    created_at: at(minutes),
    last_edited_at: null,
    url: `https://github.com/acme/app/pull/7#discussion_r${id}`,
  }
}
const filler = (i) =>
  `Finding ${i}: the retry loop in src/module-${i % 97}.ts also retries 4xx responses other than 429; those never succeed. Consider failing at once and covering it in a test.`

function bigWorld() {
  const threads = []
  for (let i = 0; i < THREADS; i++) {
    const kind = i % 10 // 7 in 10 resolved, 2 answered and open (stale), 1 to answer
    const comments = [threadComment(BOT, filler(i), i % 600)]
    if (kind >= 7) comments.push(threadComment(ME, `Fixed in ${String(i).padStart(7, '0')}.`, 600 + (i % 60)))
    if (kind === 9) comments.push(threadComment(BOT, `Still flagging: ${filler(i)}`, 700 + (i % 60)))
    threads.push({
      id: `PRRT_${i}`,
      path: `src/module-${i % 97}.ts`,
      line: 1 + (i % 400),
      is_resolved: kind < 7,
      is_outdated: false,
      comments,
    })
  }
  const comments = Array.from({ length: 200 }, (_, i) => ({
    id: 50_000 + i,
    author: i % 2 ? ME : 'alice',
    author_type: 'User',
    body: `Conversation comment ${i}: ${filler(i)}`,
    created_at: at(i),
    last_edited_at: null,
    url: `https://github.com/acme/app/pull/7#issuecomment-${50_000 + i}`,
  }))
  comments.push({
    id: 59_999,
    author: BOT,
    author_type: 'Bot',
    body: 'Review summary\n\n1. [bug/major] src/module-1.ts:3 — retries 4xx responses\n\nVERDICT: CHANGES_REQUESTED',
    created_at: at(900),
    last_edited_at: null,
    url: 'https://github.com/acme/app/pull/7#issuecomment-59999',
  })
  const reviews = Array.from({ length: 100 }, (_, i) => ({
    id: 60_000 + i,
    author: 'alice',
    author_type: 'User',
    state: 'COMMENTED',
    body: i % 5 ? '' : `Review ${i}: ${filler(i)}`,
    submitted_at: at(i),
    last_edited_at: null,
    url: null,
  }))
  return {
    pr: {
      number: 7,
      url: 'https://github.com/acme/app/pull/7',
      head: 'a'.repeat(40),
      branch: 'feat',
      base: 'main',
      author: ME,
      state: 'OPEN',
      mergeable: 'MERGEABLE',
      review_decision: 'REVIEW_REQUIRED',
      merged_at: null,
    },
    checks: Array.from({ length: 30 }, (_, i) => ({
      type: 'CheckRun',
      name: `check-${i}`,
      status: 'COMPLETED',
      conclusion: 'SUCCESS',
      url: `https://ci.example/${i}`,
    })),
    threads,
    comments,
    reviews,
    page_size: 100,
  }
}

// ---------------------------------------------------------------- the ticks

function ghSpans() {
  if (!existsSync(TIMES)) return []
  return readFileSync(TIMES, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [start, end] = line.split(' ').map(Number)
      return (end - start) * 1000
    })
}

function tick() {
  rmSync(TIMES, { force: true })
  const started = process.hrtime.bigint()
  const out = cli('pr-check')
  const tickMs = Number(process.hrtime.bigint() - started) / 1e6
  const spans = ghSpans()
  const lines = out.stdout.split('\n').filter(Boolean)
  if (lines.length !== 1) throw new Error(`pr-check printed ${lines.length} lines on stdout, not one document`)
  const doc = JSON.parse(lines[0])
  return { tickMs, ghMs: spans.reduce((a, b) => a + b, 0), calls: spans.length, bytes: out.stdout.length, doc }
}

try {
  git('init', '-q')
  writeFileSync(join(repo, 'README.md'), '# bench\n')
  git('add', '-A')
  git('commit', '-qm', 'initial')
  const world = bigWorld()
  writeFileSync(env.FAKE_GH_WORLD, JSON.stringify(world))
  const worldBytes = readFileSync(env.FAKE_GH_WORLD).length
  cli('start', '--task', 'bench a big PR')
  cli('finish', '--verdict', 'CHANGES_REQUESTED', '--pr', '7')

  const first = tick() // the first tick: everything is new
  const quiet = Array.from({ length: TICKS }, () => tick())
  for (const t of quiet) {
    if (t.doc.changed !== false) throw new Error('a tick with nothing new said changed: true')
    if (t.doc.threads.total !== THREADS) throw new Error(`threads.total ${t.doc.threads.total}, not ${THREADS}`)
  }
  const ratio = median(quiet.map((t) => t.tickMs / t.ghMs))
  const result = {
    threads: THREADS,
    world_bytes: worldBytes,
    document_bytes: first.bytes,
    actionable: first.doc.threads.actionable.length,
    stale_unresolved: first.doc.threads.stale_unresolved.length,
    gh_calls: first.calls,
    first_tick_ms: Math.round(first.tickMs),
    quiet_tick_ms: Math.round(median(quiet.map((t) => t.tickMs))),
    quiet_gh_ms: Math.round(median(quiet.map((t) => t.ghMs))),
    quiet_overhead_ms: Math.round(median(quiet.map((t) => t.tickMs - t.ghMs))),
    ratio: Number(ratio.toFixed(2)),
    target: TARGET,
    met: ratio <= TARGET,
  }
  if (AS_JSON) console.log(JSON.stringify(result))
  else {
    console.log(
      `pr-check on a PR of ${THREADS} threads (world ${(worldBytes / 1e6).toFixed(1)} MB): one document of ${(first.bytes / 1e6).toFixed(2)} MB, ${result.actionable} actionable, ${result.stale_unresolved} stale; ${result.gh_calls} gh calls`,
    )
    console.log(`first tick ${result.first_tick_ms} ms`)
    console.log(
      `tick with nothing new (median of ${TICKS}): ${result.quiet_tick_ms} ms, of which gh ${result.quiet_gh_ms} ms, pair-loop ${result.quiet_overhead_ms} ms: ${result.ratio}x the gh calls (target ≤ ${TARGET}x: ${result.met ? 'met' : 'NOT met'})`,
    )
  }
  process.exitCode = result.met ? 0 : 1
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
