#!/usr/bin/env node
// The review diff's cost (not a test): on a generated repository of 30k files / 350 MB with 20 changed and 5 untracked
// files, the snapshot and diff build (lib/review/diff.ts workingDiff over lib/snapshot/, bundled with esbuild and called
// in this process) with a warm stat cache and the whole `review` command (dist/pair-loop.cjs, stub reviewer) against
// `git status` on the same tree, measured alternately in the same run; the first snapshot with no stat cache (MB/s of
// file content hashed); then the peak RSS of each with a 1 GiB untracked text file (/usr/bin/time -v: the largest
// process of the tree, git included). Targets (issue 17): warm diff ≤ 3× `git status`; cold ≥ 300 MB/s; RSS ≤ 150 MB.
// Also timed, without a target: the run's first review (the reviewer's copy written whole) and the review of a new
// tree after a one-file edit (the copy brought up to date), as each round of the loop has them.
//
//   node bench/diff.mjs [--runs 7] [--files 30000] [--mb 350] [--rss-mb 1024] [--skip-rss] [--keep] [--json]
//
// Needs a built CLI (dist/pair-loop.cjs, or PAIR_LOOP_CLI=<path>) and esbuild (a dev dependency of unbuild), which
// bundles lib/review/diff.ts into .cache/bench-diff/ (git-ignored). Everything else runs in a temp folder with its own
// HOME and PAIR_LOOP_HOME, removed after unless --keep.
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchEnv, median } from './_util.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const CLI = resolve(process.env.PAIR_LOOP_CLI || join(ROOT, 'dist', 'pair-loop.cjs'))
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}
const RUNS = option('runs', 7)
const FILES = option('files', 30_000)
const TOTAL_MB = option('mb', 350)
const RSS_MB = option('rss-mb', 1024)
const flag = (name) => process.argv.includes(`--${name}`)
if (!existsSync(CLI)) {
  console.error(`${CLI} is missing: build first (npm run build, or PAIR_LOOP_CLI=<a built pair-loop.cjs>)`)
  process.exit(1)
}

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-diff-')))
const home = join(scratch, 'home')
const env = benchEnv(home, { TMPDIR: scratch })
mkdirSync(env.PAIR_LOOP_HOME, { recursive: true })
// the stub reviewer is a --reviewer-cmd: the person allows it in their config (the bench's home is the person's here)
writeFileSync(join(env.PAIR_LOOP_HOME, 'config.json'), JSON.stringify({ pair_loop: { allow_reviewer_cmd: true } }))
// workingDiff runs in this process: give it the same environment as the commands
for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key]
Object.assign(process.env, env)

function run(command, args, cwd, extra = {}) {
  const out = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28, ...extra })
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stderr}`)
  return out
}
// no `git gc --auto`: committing 30k loose objects would start one in the background, packing them for seconds while
// the snapshot is timed (under chrt, at the same real-time priority), and still writing into .git when the bench ends
const git = (cwd, ...args) =>
  run('git', ['-c', 'core.compression=1', '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', ...args], cwd).stdout
const cli = (cwd, ...args) => JSON.parse(run(process.execPath, [CLI, ...args], cwd).stdout)
const stub = (name) => JSON.stringify(['sh', join(ROOT, 'fixtures', 'reviewers', `${name}.sh`)])
const ms = () => Number(process.hrtime.bigint()) / 1e6

/** Text of `bytes` bytes, lines of code-like text, distinct per `seed`. */
function text(seed, bytes) {
  const lines = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line = `export const value_${seed}_${i} = compute(${(seed * 7919 + i * 104729) % 1_000_003}, 'item ${i}')\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('').slice(0, bytes)
}

function generate(repo) {
  mkdirSync(repo, { recursive: true })
  git(repo, '-c', 'init.defaultBranch=main', 'init', '-q')
  const average = Math.floor((TOTAL_MB * 1024 * 1024) / FILES)
  const block = text(0, 2 * average + 4096)
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, `pkg${String(Math.floor(i / 100)).padStart(3, '0')}`)
    if (i % 100 === 0) mkdirSync(dir, { recursive: true })
    const size = Math.floor(average * (0.2 + (1.6 * ((i * 7) % 100)) / 100))
    const offset = (i * 131) % (block.length - size)
    writeFileSync(join(dir, `file${i}.ts`), `// file ${i}\n${block.slice(offset, offset + size)}`)
  }
  git(repo, 'add', '-A')
  git(repo, '-c', 'commit.gpgsign=false', 'commit', '-qm', 'generated')
  git(repo, 'status', '--porcelain') // refresh the index once, as any git command would: no racily clean entries
}

function change(repo) {
  for (let i = 0; i < 20; i++) {
    const n = Math.floor((i * FILES) / 20) + 7
    const path = join(repo, `pkg${String(Math.floor(n / 100)).padStart(3, '0')}`, `file${n}.ts`)
    writeFileSync(path, `${text(n, 2000)}// changed by the bench\n`, { flag: 'a' })
  }
  for (let i = 0; i < 5; i++) writeFileSync(join(repo, `untracked-${i}.ts`), text(100_000 + i, 8000))
}

async function bundleWorkingDiff() {
  const { build } = await import('esbuild')
  const outdir = join(ROOT, '.cache', 'bench-diff') // under ROOT: zx resolves from its node_modules
  await build({
    // the snapshot's hashing thread beside it, where lib/snapshot/hashing.ts looks for a bundle's
    entryPoints: {
      diff: join(ROOT, 'lib', 'review', 'diff.ts'),
      'hash-worker': join(ROOT, 'lib', 'snapshot', 'hash-worker.ts'),
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  })
  return (await import(pathToFileURL(join(outdir, 'diff.mjs')).href)).workingDiff
}

/** Maximum resident set size of a command and everything it ran (GNU time reports the largest process). */
function peakRss(command, args, cwd) {
  const out = run('/usr/bin/time', ['-v', command, ...args], cwd)
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(out.stderr)?.[1])
  return { mb: kb / 1024, stdout: out.stdout }
}

async function speed(workingDiff) {
  const repo = join(scratch, 'big-tree')
  let begin = ms()
  generate(repo)
  const generated = ms() - begin
  cli(repo, 'start', '--task', 'diff bench', '--max-rounds', '100')
  change(repo)
  const base = git(repo, 'rev-parse', 'HEAD').trim()
  // the 700 MB just written (the files and git's objects) flushed first: "cold" is pair-loop's stat cache empty, not
  // the disk still busy writing them back (a first try right after took seconds more, at random)
  run('sync', [], repo)
  // the first snapshot: no stat cache yet, every file read and hashed (the cache removed before each try)
  const cold = []
  for (let i = 0; i < 3; i++) {
    rmSync(join(env.PAIR_LOOP_HOME, 'cache', 'snapshot'), { recursive: true, force: true })
    begin = ms()
    await workingDiff(repo, base, 200_000)
    cold.push(ms() - begin)
  }
  const samples = { status: [], diff: [], review: [] }
  let firstReview = null
  const subjects = {
    status: () => run('git', ['status', '--porcelain'], repo),
    diff: () => workingDiff(repo, base, 200_000),
    review: () => {
      cli(repo, 'coder-done', '--summary', 'bench round')
      begin = ms()
      cli(repo, 'review', '--reviewer-cmd', stub('changes'))
      const took = ms() - begin
      firstReview ??= took // the run's first: its reviewer's copy written whole (a warm-up round, not in the median)
      return took
    },
  }
  let shown
  const names = ['status', 'diff', 'review']
  for (let round = 0; round < RUNS + 2; round++)
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length] // rotated: none always first, or always after another
      begin = ms()
      const result = await subjects[name]()
      const took = typeof result === 'number' ? result : ms() - begin
      if (name === 'diff') shown = result
      if (round >= 2) samples[name].push(took) // two warm-up rounds
    }
  // a round as the loop has them: the coder edits a file, so the tree is new and the reviewer's copy is written again
  const edited = []
  for (let round = 0; round < RUNS; round++) {
    const path = join(repo, 'pkg000', 'file7.ts')
    writeFileSync(path, `// round ${round}\n`, { flag: 'a' })
    cli(repo, 'coder-done', '--summary', `edit ${round}`)
    begin = ms()
    cli(repo, 'review', '--reviewer-cmd', stub('changes'))
    edited.push(ms() - begin)
  }
  const status = median(samples.status)
  return {
    first_review_ms: firstReview,
    review_new_tree_ms: median(edited),
    review_new_tree_ratio: median(edited) / status,
    generated_s: generated / 1000,
    cold_ms: median(cold),
    cold_tries_ms: cold,
    cold_mb_per_s: TOTAL_MB / (median(cold) / 1000),
    diff_stat: shown.stat.split('\n').at(-1),
    git_status_ms: status,
    diff_ms: median(samples.diff),
    diff_ratio: median(samples.diff) / status,
    review_ms: median(samples.review),
    review_ratio: median(samples.review) / status,
  }
}

function memory() {
  const repo = join(scratch, 'huge-file')
  mkdirSync(repo)
  git(repo, '-c', 'init.defaultBranch=main', 'init', '-q')
  writeFileSync(join(repo, 'README.md'), '# bench\n')
  git(repo, 'add', '-A')
  git(repo, '-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial')
  cli(repo, 'start', '--task', 'rss bench')
  const fd = openSync(join(repo, 'huge.txt'), 'w')
  const chunk = Buffer.from(text(7, 1 << 20))
  for (let i = 0; i < RSS_MB; i++) writeSync(fd, chunk)
  closeSync(fd)
  const base = git(repo, 'rev-parse', 'HEAD').trim()
  const entry = join(ROOT, '.cache', 'bench-diff', 'diff.mjs')
  const probe = `const { workingDiff } = await import(${JSON.stringify(pathToFileURL(entry).href)}); const d = await workingDiff(${JSON.stringify(repo)}, ${JSON.stringify(base)}, 200000); console.log(JSON.stringify({ node_mb: process.resourceUsage().maxRSS / 1024, stat: d.stat.split('\\n').at(-1) }))`
  const diff = peakRss(process.execPath, ['--input-type=module', '-e', probe], repo)
  cli(repo, 'coder-done', '--summary', 'a 1 GiB file')
  const review = peakRss(process.execPath, [CLI, 'review', '--reviewer-cmd', stub('approve')], repo)
  return {
    file_mb: RSS_MB,
    diff_tree_mb: diff.mb,
    diff_node_mb: JSON.parse(diff.stdout).node_mb,
    review_tree_mb: review.mb,
  }
}

try {
  const workingDiff = await bundleWorkingDiff()
  const result = {
    node: process.version,
    git: git(scratch, '--version').trim(),
    runs: RUNS,
    files: FILES,
    mb: TOTAL_MB,
  }
  result.speed = await speed(workingDiff)
  if (!flag('skip-rss')) result.rss = memory()
  if (flag('json')) console.log(JSON.stringify(result, null, 2))
  else {
    const s = result.speed
    const f = (value) => value.toFixed(1)
    console.log(
      `review diff bench: ${FILES} files / ${TOTAL_MB} MB, 20 changed + 5 untracked; ${RUNS} runs, medians; ${result.node}, ${result.git}`,
    )
    console.log(`  tree generated in ${f(s.generated_s)} s; diff stat: ${s.diff_stat}`)
    console.log(`  git status --porcelain   ${f(s.git_status_ms)} ms`)
    console.log(
      `  first snapshot (cold)    ${f(s.cold_ms)} ms = ${f(s.cold_mb_per_s)} MB/s of file content hashed (target ≥ 300 MB/s: ${s.cold_mb_per_s >= 300 ? 'met' : 'NOT met'}; tries ${s.cold_tries_ms.map((t) => t.toFixed(0)).join(', ')} ms)`,
    )
    console.log(
      `  diff build (workingDiff) ${f(s.diff_ms)} ms = ${s.diff_ratio.toFixed(2)}× git status (target ≤ 3×: ${s.diff_ratio <= 3 ? 'met' : 'NOT met'})`,
    )
    console.log(
      `  pair-loop review (stub)  ${f(s.review_ms)} ms = ${s.review_ratio.toFixed(2)}× git status (the tree reviewed before)`,
    )
    console.log(
      `  first review of the run  ${f(s.first_review_ms)} ms (once: the reviewer's copy written whole, 64 MiB)`,
    )
    console.log(
      `  review of a new tree     ${f(s.review_new_tree_ms)} ms = ${s.review_new_tree_ratio.toFixed(2)}× git status (one file edited: the reviewer's copy written again)`,
    )
    if (result.rss) {
      const r = result.rss
      const met = Math.max(r.diff_tree_mb, r.review_tree_mb) <= 150 ? 'met' : 'NOT met'
      console.log(
        `  peak RSS, ${r.file_mb} MiB untracked text file (largest process, git included; target ≤ 150 MB: ${met}):`,
      )
      console.log(
        `    diff build ${f(r.diff_tree_mb)} MB (node alone ${f(r.diff_node_mb)} MB); pair-loop review ${f(r.review_tree_mb)} MB`,
      )
    }
  }
} finally {
  if (flag('keep')) console.error(`kept ${scratch}`)
  else rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }) // a review worker may still be ending
}
