#!/usr/bin/env node
// How many git processes each command of one loop starts (not a test): start, coder-done, review (a stub reviewer that
// approves), status and finish, then the same loop again ending in `finish --create-pr` (the fake gh of fixtures/gh),
// each run under `strace -f -e trace=execve`, every successful exec of pair-loop's own git calls (all start with
// --no-pager; the fake gh's are not counted) counted by subcommand. Process spawns are a main cost of the test suite
// on 2 cores: this shows where they go.
//
//   node bench/git-processes.mjs [--json] [--by-call]
//
// Runs the built CLI (dist/pair-loop.cjs; `npm run build` first) in a temp git repository with a temp PAIR_LOOP_HOME
// and HOME; nothing of the developer's is read or written. Needs strace.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchEnv, CLI, ROOT, requireBuilt } from './_util.mjs'

const AS_JSON = process.argv.includes('--json')
const BY_CALL = process.argv.includes('--by-call')

requireBuilt()

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-git-')))
const home = join(scratch, 'home')
const repo = join(scratch, 'repo')
const env = benchEnv(home, {
  TMPDIR: scratch,
  TZ: 'UTC',
  PATH: `${join(ROOT, 'fixtures', 'gh')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  FAKE_GH_DIR: join(scratch, 'gh'),
})

function must(command, args, cwd = repo) {
  const out = spawnSync(command, args, { cwd, env, encoding: 'utf8' })
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${out.status}: ${out.stderr}`)
  return out.stdout
}

function setup() {
  must('mkdir', ['-p', repo, home], scratch)
  must('git', ['-c', 'init.defaultBranch=main', 'init', '-q'])
  writeFileSync(join(repo, 'README.md'), '# bench\n')
  writeFileSync(join(repo, 'sum.js'), 'export const sum = (a, b) => a + b\n')
  must('git', ['add', '-A'])
  must('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial'])
  must('git', ['checkout', '-qb', 'feature/sum'])
}

/** The flags every hardened call starts with (lib/ground/git.ts FIXED and the driver blanks): not the subcommand. */
function subcommandOf(argv) {
  let i = 1
  while (i < argv.length && (argv[i] === '--no-pager' || argv[i] === '--no-replace-objects' || argv[i] === '-c'))
    i += argv[i] === '-c' ? 2 : 1
  return argv.slice(i)
}

/** The argv of every successful execve of git in the files strace wrote (one per process: `-ff`). */
function gitExecs(dir) {
  const calls = []
  for (const name of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const match = /^execve\("([^"]*)", \[(.*)\], .*\) = 0$/.exec(line)
      if (!match || !/(^|\/)git$/.test(match[1])) continue
      const argv = JSON.parse(`[${match[2].replace(/\\x([0-9a-f]{2})/g, '\\u00$1')}]`)
      if (argv[1] === '--no-pager') calls.push(argv)
    }
  }
  return calls
}

/** One command under strace: how many git processes, by subcommand (or by subcommand and arguments). */
function count(args) {
  const traces = mkdtempSync(join(scratch, 'strace-'))
  const out = spawnSync(
    'strace',
    ['-f', '-ff', '-qq', '-s', '512', '-e', 'trace=execve', '-o', join(traces, 't'), process.execPath, CLI, ...args],
    { cwd: repo, env, encoding: 'utf8' },
  )
  if (out.status !== 0) throw new Error(`pair-loop ${args.join(' ')} exited ${out.status}: ${out.stdout}${out.stderr}`)
  const by = {}
  const calls = gitExecs(traces)
  for (const argv of calls) {
    const rest = subcommandOf(argv)
    const key = BY_CALL
      ? rest.join(' ')
      : rest.slice(0, rest[0] === 'rev-parse' || rest[0] === 'config' ? 2 : 1).join(' ')
    by[key] = (by[key] ?? 0) + 1
  }
  rmSync(traces, { recursive: true, force: true })
  return { total: calls.length, by }
}

/** One loop; `commit`: the change left by the loop before is committed before start, the approved one before finish. */
const loop = (finish, commit = false) => [
  { args: ['start', '--task', 'sum two numbers'], commit },
  { args: ['status'] },
  { args: ['coder-done', '--summary', 'sum written'], edit: true },
  { args: ['review', '--reviewer-cmd', 'builtin:approve'] },
  { args: ['status'] },
  { args: finish, commit },
]
const steps = [
  ...loop(['finish', '--verdict', 'APPROVED']),
  ...loop(['finish', '--verdict', 'APPROVED', '--create-pr'], true),
]
let edits = 0

const results = []
try {
  setup()
  for (const { args, edit, commit } of steps) {
    if (edit) writeFileSync(join(repo, 'sum.js'), `export const sum = (a, b) => a + b + ${++edits}\n`)
    if (commit) {
      must('git', ['add', 'sum.js'])
      must('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'the change'])
    }
    const command = args.includes('--create-pr') ? 'finish --create-pr' : args[0]
    results.push({ command, ...count(args) })
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

if (AS_JSON) console.log(JSON.stringify(results))
else
  for (const { command, total, by } of results) {
    const parts = Object.entries(by).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    console.log(`${command.padEnd(18)} ${String(total).padStart(3)}  ${parts.map(([k, n]) => `${k}: ${n}`).join(', ')}`)
  }
