// One three-round loop of bench/round-cost.mjs through the built pair-loop CLI with a real reviewer CLI (claude or
// codex) on a mock model API of its own that bills prompt caching (MOCK_BILL_CACHE=1, test/e2e/mock-billing.mjs):
// round 1 CHANGES_REQUESTED, replies and a fix, round 2 CHANGES_REQUESTED, a reply and a fix, round 3 APPROVED.
// Returns, per round, the reviewer's usage and cost as pair-loop recorded them on the run and what the mock billed.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { MOCK_OPENAI_KEY, claudeVars, codexConfigToml } from '../test/e2e/mock-clients.mjs'
import { CLAUDE_BIN, CODEX_BIN } from '../test/e2e/setup.mjs'
import { CLI, ROOT, benchEnv } from './_util.mjs'

const MOCK_SERVER = join(ROOT, 'test', 'e2e', 'mock-server.mjs')
/** The model each reviewer runs: Claude by pair-loop's reviewer_model, Codex by the config.toml above. */
export const MODELS = { claude: 'claude-sonnet-4-5-20250929', codex: 'gpt-5.5' }
const REVIEW_TIMEOUT_S = '60'
/** PAIR_LOOP_BENCH_KEEP=1: keep each loop's folder, the request bodies the mock received in it too (for a look). */
const KEEP = process.env.PAIR_LOOP_BENCH_KEEP === '1'

const SUM =
  'export function sum(xs: number[]): number {\n  let total = 0\n  for (let i = 0; i < xs.length; i++) total += xs[i]\n  return total\n}\n'
const REVIEWS = [
  [
    'Two problems in the change.',
    '',
    '1. [bug/major] src/a.ts:3 — the loop bound is off by one: `<=` reads past the end of the array',
    '2. [tests/minor] src/report.ts:1 — the new report module has no test',
    '',
    'VERDICT: CHANGES_REQUESTED',
  ].join('\n'),
  [
    'The bound is fixed; the missing test is answered.',
    '',
    '1. [bug/minor] src/report.ts:4 — the header row is written twice: drop the second `lines.push(header)`',
    '',
    'VERDICT: CHANGES_REQUESTED',
  ].join('\n'),
  'The header is written once now; nothing else to raise.\n\nVERDICT: APPROVED',
]

/** A report module of about `kb` KiB: the bulk of the change under review (its second header line is the bug). */
export function reportModule(kb, { fixed = false } = {}) {
  const head = [
    'export function report(rows: string[][]): string {',
    '  const header = rows[0]!.join(",")',
    '  const lines = [header]',
  ]
  if (!fixed) head.push('  lines.push(header)')
  const body = []
  for (let i = 0; Buffer.byteLength(body.join('\n')) < kb * 1024; i++)
    body.push(`  // column ${i}: the value of row r is rows[r][${i}], padded to the widest cell of the column`)
  return [
    ...head,
    ...body,
    '  for (const row of rows.slice(1)) lines.push(row.join(","))',
    '  return lines.join("\\n")',
    '}',
    '',
  ].join('\n')
}

/** Start the mock model API (its own port, log, script and bill files, in `dir`); resolves once it listens. */
async function startMock(dir, warmS) {
  const files = {
    port: join(dir, 'port'),
    log: join(dir, 'requests.jsonl'),
    script: join(dir, 'script.json'),
    bill: join(dir, 'billed.jsonl'),
  }
  writeFileSync(files.script, '[]')
  writeFileSync(files.bill, '')
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    MOCK_PORT_FILE: files.port,
    MOCK_LOG_FILE: files.log,
    MOCK_SCRIPT_FILE: files.script,
    MOCK_BILL_CACHE: '1',
    MOCK_BILL_FILE: files.bill,
    MOCK_CACHE_TTL_S: String(warmS),
    MOCK_PARENT_PID: String(process.pid),
    MOCK_MAX_LIFETIME_S: '900',
    ...(KEEP ? { MOCK_DUMP_DIR: join(dir, 'bodies') } : {}),
  }
  const child = spawn(process.execPath, [MOCK_SERVER], { env, stdio: 'ignore' })
  for (let waited = 0; !existsSync(files.port); waited += 25) {
    if (waited > 10_000 || child.exitCode !== null) throw new Error('the mock model API did not start')
    await new Promise((r) => setTimeout(r, 25))
  }
  const port = Number(readFileSync(files.port, 'utf8').trim())
  const bills = () =>
    readFileSync(files.bill, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  return { port, files, bills, stop: () => child.kill('SIGTERM') }
}

/** A home whose config points pair-loop at the real reviewer CLIs, their environment at the mock, and a repository. */
function sandbox(scratch, mock, tool, resumeS) {
  const home = join(scratch, 'home')
  const env = { ...benchEnv(home), TMPDIR: scratch, ...claudeVars(mock.port), MOCK_API_KEY: MOCK_OPENAI_KEY }
  for (const dir of [env.PAIR_LOOP_HOME, env.CLAUDE_CONFIG_DIR, env.CODEX_HOME]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(env.CODEX_HOME, 'config.toml'), codexConfigToml(mock.port))
  const reviewerEnv = {
    HOME: home,
    CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR,
    CODEX_HOME: env.CODEX_HOME,
    ...claudeVars(mock.port),
    MOCK_API_KEY: MOCK_OPENAI_KEY,
  }
  const section = {
    claude_bin: CLAUDE_BIN,
    codex_bin: CODEX_BIN,
    reviewer_env: reviewerEnv,
    ...(tool === 'claude' ? { reviewer_model: MODELS.claude } : {}),
    ...(resumeS === null ? {} : { reviewer_resume_s: resumeS }),
  }
  writeFileSync(join(env.PAIR_LOOP_HOME, 'config.json'), JSON.stringify({ pair_loop: section }))
  const repo = join(scratch, 'repo')
  mkdirSync(join(repo, 'src'), { recursive: true })
  writeFileSync(join(repo, 'README.md'), '# demo\n')
  writeFileSync(join(repo, 'src', 'a.ts'), SUM)
  const git = (...args) => must('git', args, repo, env)
  git('-c', 'init.defaultBranch=main', 'init', '-q')
  git('add', '-A')
  git('-c', 'commit.gpgsign=false', 'commit', '-qm', 'initial')
  return { env, repo }
}

function must(command, args, cwd, env, input) {
  const out = spawnSync(command, args, { cwd, env, input, encoding: 'utf8', timeout: 120_000 })
  if (out.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${out.status ?? out.signal}: ${out.stdout}\n${out.stderr}`)
  return out.stdout
}

/**
 * The loop with `tool` reviewing; `resumeS` null keeps pair-loop's default reviewer_resume_s, 0 asks for fresh
 * sessions. Returns {rounds: [{recorded, billed, seconds}], sessions} (billed: the mock's usage lines of that round).
 */
export async function roundLoop({ tool, resumeS, kb, warmS }) {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pl-bench-rounds-')))
  const mock = await startMock(scratch, warmS)
  try {
    const { env, repo } = sandbox(scratch, mock, tool, resumeS)
    const cli = (args, input) => JSON.parse(must(process.execPath, [CLI, ...args], repo, env, input) || 'null')
    const write = (path, text) => {
      mkdirSync(dirname(join(repo, path)), { recursive: true })
      writeFileSync(join(repo, path), text)
    }
    const coder = tool === 'claude' ? 'codex' : 'claude'
    const runId = cli([
      'start',
      '--task',
      'Add a CSV report and fix sum()',
      '--reviewer',
      tool,
      '--coder',
      coder,
    ]).run_id
    const fixes = [
      () => {
        write('src/a.ts', SUM.replace('i < xs.length', 'i <= xs.length'))
        write('src/report.ts', reportModule(kb))
      },
      () => write('src/a.ts', SUM),
      () => write('src/report.ts', reportModule(kb, { fixed: true })),
    ]
    const replies = [
      [
        ['1.1', 'fixed', 'The bound is `<` again.'],
        ['1.2', 'wont-fix', 'The report gets its tests in the next PR.'],
      ],
      [['2.1', 'fixed', 'The second header line is gone.']],
      [],
    ]
    const seconds = []
    const billedBefore = []
    for (let round = 0; round < 3; round++) {
      fixes[round]()
      cli(['coder-done', '--summary', `round ${round + 1}`])
      writeFileSync(
        mock.files.script,
        JSON.stringify([{ api: tool === 'claude' ? 'anthropic' : 'openai', text: REVIEWS[round] }]),
      )
      billedBefore.push(mock.bills().length)
      const began = Date.now()
      cli(['review', '--timeout', REVIEW_TIMEOUT_S])
      seconds.push((Date.now() - began) / 1000)
      for (const [finding, disposition, body] of replies[round])
        cli(['reply', '--finding', finding, '--disposition', disposition, '--body-file', '-'], body)
    }
    const bills = mock.bills()
    const state = JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'runs', `${runId}.json`), 'utf8'))
    if (state.phase !== 'approved') throw new Error(`the run ended in ${state.phase}, not approved`)
    return {
      rounds: state.rounds.map((round, i) => ({
        recorded: { usage: round.reviewer.usage, usd: round.reviewer.cost?.usd ?? null },
        billed: bills.slice(billedBefore[i], billedBefore[i + 1] ?? bills.length).map((line) => line.usage),
        seconds: seconds[i],
      })),
      sessions: state.rounds.map((round) => round.reviewer.session_id),
    }
  } finally {
    mock.stop()
    if (KEEP) process.stderr.write(`kept ${scratch}\n`)
    else rmSync(scratch, { recursive: true, force: true })
  }
}
