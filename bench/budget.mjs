#!/usr/bin/env node
// bench/budget: the cost of `budget-check` on a run whose coder transcript is 200 MB.
//
//   node bench/budget.mjs [--mb 200] [--runs 15] [--dist DIR] [--keep]      (needs a build: npm run build)
//
// 1. cold: the first check reads the whole transcript (no cache) → MB/s, wall clock of the whole command.
// 2. warm: 1 MB is appended, then the check runs again (reads only what was appended, adds only the new responses
//    to the sums its cache kept); measured alternately with `node -e 0`, medians, as a ratio to it.
// 3. the peer: `ccusage claude session --offline --json` (20.0.24, a native binary) on the same folder (HOME an empty
//    temp dir), as a ratio to the warm check: reported, not a target (no Node process starts as fast as it).
// Targets: cold ≥ 500 MB/s; warm ≤ 2.5× node -e 0.
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const CCUSAGE = join(ROOT, 'node_modules', '.bin', 'ccusage')
const option = (name) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const flag = (name, fallback) => Number(option(name) ?? fallback)
// a build of its own (PAIR_LOOP_BUILD_OUT_DIR=.dist-bench npm run build) is not swapped away by other runs mid-bench
const CLI = join(resolve(ROOT, option('dist') ?? 'dist'), 'pair-loop.cjs')
const MB = flag('mb', 200)
const RUNS = flag('runs', 15)
const log = (text) => process.stderr.write(`${text}\n`)

if (!existsSync(CLI)) {
  log('bench/budget: dist/pair-loop.cjs is missing; run `npm run build` first')
  process.exit(2)
}

// ---------- an isolated home, a repository, a run
const root = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-budget-')))
const repo = join(root, 'repo')
const env = {
  PATH: process.env.PATH,
  HOME: join(root, 'home'),
  PAIR_LOOP_HOME: join(root, 'pl'),
  CLAUDE_CONFIG_DIR: join(root, 'claude'),
  CODEX_HOME: join(root, 'codex'),
  TZ: 'UTC',
  NO_COLOR: '1',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@example.com',
}
mkdirSync(env.HOME, { recursive: true })
// the transcripts are large: whatever happens, don't leave them behind (unless asked to)
process.on('exit', () => {
  if (!process.argv.includes('--keep')) rmSync(root, { recursive: true, force: true })
})
mkdirSync(repo, { recursive: true })
const sh = (cmd, args, options = {}) => {
  const out = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options })
  if (out.status !== 0 && !options.allowFail)
    throw new Error(`${cmd} ${args.join(' ')}: exit ${out.status}\n${out.stderr}`)
  return out
}
sh('git', ['-c', 'init.defaultBranch=main', 'init', '-q'])
sh('git', ['-c', 'commit.gpgsign=false', 'commit', '-q', '--allow-empty', '-m', 'init'])
const started = JSON.parse(sh(process.execPath, [CLI, 'start', '--task', 'bench', '--budget-usd', '100000']).stdout)
const runId = started.run_id
const createdAt = Date.parse(JSON.parse(readFileSync(started.state_path, 'utf8')).created_at)

// ---------- a realistic Claude Code transcript: user turns, tool results, responses written once per content block
const SID = '0be0c4a1-0000-4000-8000-00000000be4c'
const folder = join(env.CLAUDE_CONFIG_DIR, 'projects', realpathSync(repo).replace(/[^A-Za-z0-9]/g, '-'))
mkdirSync(folder, { recursive: true })
const transcript = join(folder, `${SID}.jsonl`)

let seed = 42
const random = () => {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0
  return seed / 4294967296
}
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1))
const WORDS =
  'the diff function return const value error check file test state round review budget token cache line read write parse json model usage cost session'.split(
    ' ',
  )
const text = (bytes) => {
  let out = ''
  while (out.length < bytes) out += WORDS[int(0, WORDS.length - 1)] + (random() < 0.1 ? '.\n' : ' ')
  return out
}
const MODELS = ['claude-sonnet-4-5-20250929', 'claude-opus-4-5-20251101', 'claude-haiku-4-5-20251001']
let n = 0
let clock = createdAt + 1000
function turn() {
  const ts = () => {
    clock += int(5, 400)
    return new Date(clock).toISOString()
  }
  const lines = []
  const base = { cwd: realpathSync(repo), sessionId: SID, version: '2.1.197', gitBranch: 'main', userType: 'external' }
  lines.push({
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    message: {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: text(int(1000, 12_000)) }],
    },
    uuid: `u-${++n}`,
    timestamp: ts(),
    ...base,
  })
  const usage = {
    input_tokens: int(1, 50),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: int(10_000, 150_000),
    output_tokens: int(20, 3000),
    cache_creation: { ephemeral_5m_input_tokens: int(0, 5000), ephemeral_1h_input_tokens: int(0, 2000) },
    service_tier: 'standard',
  }
  usage.cache_creation_input_tokens =
    usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens
  const id = `msg_01${n.toString(36).padStart(22, '0')}`
  const requestId = `req_011C${n.toString(36).padStart(20, '0')}`
  const model = MODELS[int(0, MODELS.length - 1)]
  const blocks = [
    { type: 'thinking', thinking: text(int(200, 3000)), signature: text(300).replace(/\s/g, '') },
    { type: 'text', text: text(int(50, 800)) },
    {
      type: 'tool_use',
      id: `toolu_${n}`,
      name: 'Edit',
      input: { file_path: '/repo/src/file.ts', old_string: text(int(100, 1500)), new_string: text(int(100, 1500)) },
    },
  ].slice(0, int(1, 3))
  for (const block of blocks) {
    lines.push({
      parentUuid: `u-${n}`,
      isSidechain: false,
      type: 'assistant',
      requestId,
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
      uuid: `a-${++n}`,
      timestamp: ts(),
      ...base,
    })
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`
}

function appendTranscript(bytes) {
  const fd = openSync(transcript, 'a')
  let written = 0
  let chunk = ''
  while (written < bytes) {
    chunk += turn()
    if (chunk.length >= Math.min(4 * 1024 * 1024, bytes - written)) {
      written += writeSync(fd, chunk)
      chunk = ''
    }
  }
  closeSync(fd)
  return written
}

log(`bench/budget: generating a ${MB} MB transcript in ${root} …`)
const genStart = performance.now()
appendTranscript(MB * 1024 * 1024)
const size = statSync(transcript).size
log(`  ${(size / 1024 / 1024).toFixed(1)} MB in ${((performance.now() - genStart) / 1000).toFixed(1)} s`)

// ---------- measurements
const check = () => {
  const t = performance.now()
  const out = sh(process.execPath, [CLI, 'budget-check', '--run', runId], { allowFail: true })
  const ms = performance.now() - t
  if (out.status !== 0) throw new Error(`budget-check exit ${out.status}: ${out.stdout}${out.stderr}`)
  return { ms, doc: JSON.parse(out.stdout) }
}
const timed = (cmd, args, options) => {
  const t = performance.now()
  const out = sh(cmd, args, options)
  return { ms: performance.now() - t, out }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const cacheDir = join(env.PAIR_LOOP_HOME, 'cache')

// cold: no cache (the page cache is warm after generation, as for a transcript just written)
const cold = []
let coldDoc
for (let i = 0; i < RUNS; i++) {
  rmSync(cacheDir, { recursive: true, force: true })
  const r = check()
  cold.push(r.ms)
  coldDoc = r.doc
}
const coldMs = median(cold)
const src = coldDoc.sources[0]
log(
  `  cold: ${cold.map((ms) => ms.toFixed(0)).join(', ')} ms; spent $${coldDoc.spent.toFixed(2)}, ${src.entries} entries, ${src.lines} lines`,
)

// warm: append 1 MB, check; alternate with node -e 0
const warm = []
const bare = []
let warmDoc
for (let i = 0; i < RUNS; i++) {
  appendTranscript(1024 * 1024)
  const r = check()
  warm.push(r.ms)
  warmDoc = r.doc
  bare.push(timed(process.execPath, ['-e', '0']).ms)
}
const warmRead = warmDoc.sources[0].read_bytes
log(
  `  warm: ${warm.map((ms) => ms.toFixed(0)).join(', ')} ms (last read ${(warmRead / 1024 / 1024).toFixed(2)} MB); node -e 0: ${bare.map((ms) => ms.toFixed(0)).join(', ')} ms`,
)

// the peer, on the same folder
const peerHome = mkdtempSync(join(tmpdir(), 'pl-bench-ccusage-home-'))
const peer = []
let peerDoc
for (let i = 0; i < RUNS; i++) {
  const r = timed(CCUSAGE, ['claude', 'session', '--offline', '--json'], {
    cwd: peerHome,
    env: { PATH: env.PATH, HOME: peerHome, CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR },
  })
  peer.push(r.ms)
  peerDoc = JSON.parse(r.out.stdout)
}
log(
  `  ccusage: ${peer.map((ms) => ms.toFixed(0)).join(', ')} ms; its total $${peerDoc.totals.totalCost.toFixed(2)} (pair-loop's warm total $${warmDoc.spent.toFixed(2)})`,
)

const coldMBs = size / 1024 / 1024 / (coldMs / 1000)
const warmMs = median(warm)
const bareMs = median(bare)
const peerMs = median(peer)
const rows = [
  ['measure', 'result', 'target', 'ok'],
  [
    `cold first check (${(size / 1024 / 1024).toFixed(0)} MB)`,
    `${coldMs.toFixed(0)} ms = ${coldMBs.toFixed(0)} MB/s`,
    '≥ 500 MB/s',
    coldMBs >= 500,
  ],
  [
    'warm check after +1 MB',
    `${warmMs.toFixed(0)} ms = ${(warmMs / bareMs).toFixed(2)}× node -e 0 (${bareMs.toFixed(0)} ms)`,
    '≤ 2.5×',
    warmMs / bareMs <= 2.5,
  ],
  ['ccusage claude session', `${peerMs.toFixed(0)} ms = ${(peerMs / warmMs).toFixed(1)}× the warm check`, '-', '-'],
]
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)))
console.log(
  `load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${(await import('node:os')).cpus().length} cores`,
)
for (const row of rows)
  console.log(
    row.map((cell, c) => String(cell === true ? 'yes' : cell === false ? 'NO' : cell).padEnd(widths[c])).join('  '),
  )
if (process.argv.includes('--keep'))
  log(
    `  kept: ${root} (run ${runId}; env PAIR_LOOP_HOME=${env.PAIR_LOOP_HOME} CLAUDE_CONFIG_DIR=${env.CLAUDE_CONFIG_DIR})`,
  )
rmSync(peerHome, { recursive: true, force: true })
