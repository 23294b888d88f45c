// Shared test tools: temp repositories and homes, the CLI run in this process (with a test Context) or as a real
// process, and a recorded review round.
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { type Context, homeOf, processContext, withContext } from '../lib/ground/context.ts'
import { parseFindings, parseVerdict, reviewerProse } from '../lib/run/grammar.ts'
import { changeRun } from '../lib/run/run-access.ts'
import type { RunState } from '../lib/run/state.ts'
import { applyReview } from '../lib/run/transitions.ts'
import { readRun } from '../lib/run/store.ts'
import { dispatch } from '../scripts/pair-loop.ts'
import { fakeGhInProcess } from './_fake-gh.ts'
import { inProcessWorker } from './_in-process-worker.ts'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined'
/** Under bun the TypeScript sources run directly; under vitest (node) the built dist does, as users get it. */
export const CLI_ENTRY = isBun ? join(ROOT, 'scripts', 'pair-loop.ts') : join(ROOT, 'dist', 'pair-loop.cjs')
export const CLI_COMMAND = isBun ? [process.execPath, '--no-install', CLI_ENTRY] : [process.execPath, CLI_ENTRY]

/**
 * Every temp dir a test file makes goes under one folder of its own, `$TMPDIR/pair-loop-test-<pid>-<random>/`, removed
 * when the file's tests are done (removeScratchDir). The CLI processes the tests start get it as their
 * TMPDIR, so what they leave in the temp dir goes with it. PAIR_LOOP_TEST_KEEP=1 keeps them for a look.
 */
let scratchRoot: string | undefined
/** Where this file's folder goes: the run's temp dir, or the system's when the file asked for a disk (scratchOnDisk). */
let scratchParent = tmpdir

export function scratchDir(): string {
  if (scratchRoot === undefined || !existsSync(scratchRoot))
    scratchRoot = realpathSync(mkdtempSync(join(scratchParent(), `pair-loop-test-${process.pid}-`)))
  return scratchRoot
}

/**
 * This file's temp folders under the system's temp dir, not the run's, which may be under /dev (test/_global-setup.ts):
 * for a file whose programs refuse such paths. Called at the top of the file, before its first temp folder.
 */
export function scratchOnDisk(): void {
  const system = process.env.PAIR_LOOP_TEST_SYSTEM_TMPDIR
  if (system) scratchParent = () => system
}

/** Remove this file's temp folder (an afterAll of each test file's). */
export function removeScratchDir(): void {
  scratchParent = tmpdir
  if (scratchRoot === undefined) return
  if (process.env.PAIR_LOOP_TEST_KEEP === '1') {
    process.stderr.write(`test temp dirs kept in ${scratchRoot} (PAIR_LOOP_TEST_KEEP=1)\n`)
    return
  }
  // a process that outlived its test may still be writing there: retry, and say so rather than fail the file
  try {
    rmSync(scratchRoot, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
  } catch (error) {
    process.stderr.write(`could not remove the test temp dir ${scratchRoot}: ${(error as Error).message}\n`)
  }
  scratchRoot = undefined
}

// bun loads this module afresh for each file (--isolate): its hook is the file's; vitest's is test/_per-file.ts
if (isBun) afterAll(removeScratchDir)

export function tempDir(prefix = 'pl-'): string {
  return realpathSync(mkdtempSync(join(scratchDir(), prefix)))
}

/** The variables the test suite's stub reviewers read (fixtures/reviewers/*.sh), and the tests' own HOME and TMPDIR. */
export const TEST_REVIEWER_ENV = Object.fromEntries(
  [
    'STUB_STATE_DIR',
    'STUB_FINDINGS',
    'STUB_CALL',
    'STUB_VERDICT',
    'STUB_PROMPT_FILE',
    'STUB_HUGE_BYTES',
    'STUB_EXIT_CODE',
    'STUB_THREAD_ID',
    'STUB_SESSION_ID',
    'HOME',
    'TMPDIR',
  ].map((name) => [name, true]),
)

/**
 * The test person's own config (their decisions, DESIGN "Authority"): the suite runs `--reviewer-cmd` and `builtin:*`
 * reviewers, its stubs read STUB_* variables from the command that asks, and the agents' folders are the sandbox's.
 * `extra` is merged section by section (a test's own keys over these).
 */
export function testHomeConfig(home: string, extra: Record<string, Record<string, unknown>> = {}) {
  const pairLoop = extra.pair_loop ?? {}
  return {
    ...extra,
    pair_loop: {
      allow_reviewer_cmd: true,
      claude_config_dir: join(home, '.claude'),
      codex_home: join(home, '.codex'),
      ...pairLoop,
      reviewer_env: { ...TEST_REVIEWER_ENV, ...(pairLoop.reviewer_env as object | undefined) },
    },
  }
}

/** Writes the test person's config (testHomeConfig with `extra`) to `$PAIR_LOOP_HOME/config.json`. */
export function writeTestHomeConfig(pairLoopHome: string, extra: Record<string, Record<string, unknown>> = {}): void {
  mkdirSync(pairLoopHome, { recursive: true })
  writeFileSync(join(pairLoopHome, 'config.json'), JSON.stringify(testHomeConfig(dirname(pairLoopHome), extra)))
}

/** An environment with nothing of the developer's: its own HOME, pair-loop home and agent config dirs. */
export function isolatedEnv(
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv & { PAIR_LOOP_HOME: string; HOME: string } {
  const home = tempDir('pl-home-')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    PAIR_LOOP_HOME: join(home, '.pair-loop'),
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    CODEX_HOME: join(home, '.codex'),
    TMPDIR: scratchDir(),
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    // no background maintenance after each commit: a git process per commit that tests never need
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'maintenance.auto',
    GIT_CONFIG_VALUE_0: 'false',
    GIT_CONFIG_KEY_1: 'gc.auto',
    GIT_CONFIG_VALUE_1: '0',
    NO_COLOR: '1',
    TZ: 'UTC',
    ...extra,
  }
  writeTestHomeConfig(join(home, '.pair-loop'))
  return env as NodeJS.ProcessEnv & { PAIR_LOOP_HOME: string; HOME: string }
}

export function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = isolatedEnv()): string {
  const argv = ['-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args]
  const out = spawnSync('git', argv, { cwd, env })
  if (out.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${out.stderr}`)
  return out.stdout.toString('utf8')
}

/** The remote every test repository has: the fake gh's repository (github.com/acme/demo). */
export const TEST_GITHUB_URL = 'https://github.com/acme/demo.git'

/** A git repository with one commit holding `files`, and a GitHub remote (origin). */
export function makeRepo(files: Record<string, string> = { 'README.md': '# demo\n' }, name = 'repo'): string {
  const dir = join(tempDir('pl-repo-'), name)
  cpSync(repoTemplate(files), dir, { recursive: true })
  return dir
}

/**
 * The repository of `files` made once (git init, add, commit: three processes) and copied for each test that asks for
 * the same files: each test still gets a repository of its own. Under vitest a worker keeps its templates for the
 * files after (one module graph per worker), in the run's temp dir, removed at its end; bun loads this module afresh
 * for each file, so there a template is the file's, in its own folder.
 */
const templates = new Map<string, string>()
let templateRoot: string | undefined
function templateDir(): string {
  if (isBun) return tempDir('pl-template-')
  if (templateRoot === undefined || !existsSync(templateRoot))
    templateRoot = realpathSync(mkdtempSync(join(tmpdir(), `pair-loop-templates-${process.pid}-`)))
  return mkdtempSync(join(templateRoot, 'repo-'))
}

function repoTemplate(files: Record<string, string>): string {
  const key = JSON.stringify(Object.entries(files))
  const known = templates.get(key)
  if (known !== undefined && existsSync(known)) return known
  const dir = join(templateDir(), 'repo')
  mkdirSync(dir, { recursive: true })
  git(dir, ['init', '-q'])
  // the GitHub repository the fake gh (fixtures/gh) holds: a run started here pins it, and names it in every gh call
  git(dir, ['remote', 'add', 'origin', TEST_GITHUB_URL])
  writeFiles(dir, files)
  git(dir, ['add', '-A'])
  git(dir, ['commit', '-qm', 'initial'])
  templates.set(key, dir)
  return dir
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
}

export interface CliResult extends ProcessResult {
  /** The one JSON document on stdout (undefined if stdout was not exactly one JSON document). */
  json: any
}

export interface ProcessResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * A program run to its end, stdin given (or closed), output collected; past its time limit its whole
 * process group is killed, so nothing it started outlives the test.
 */
export function runProcess(
  argv: string[],
  {
    cwd,
    env,
    input,
    timeoutMs = 60_000,
  }: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number },
): Promise<ProcessResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolvePromise({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') })
    })
    child.stdin.on('error', () => {})
    child.stdin.end(input ?? '')
  })
}

export interface CliOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  input?: string | Buffer
  timeoutMs?: number
  /** An in-process `review`'s worker: in this process (the default), or a real process (a test that kills it). */
  worker?: 'process' | 'in-process'
}

/**
 * The review worker an in-process `review` starts: by default one in this process (test/_in-process-worker.ts); with
 * `worker: 'process'` a real one, the built one under vitest (Node runs no .ts), the sources under bun.
 */
const PROCESS_WORKER = isBun ? undefined : [process.execPath, join(ROOT, 'dist', 'review.cjs')]
const reviewWorkerOf = (worker: CliOptions['worker']) => (worker === 'process' ? PROCESS_WORKER : inProcessWorker)

/**
 * A test's Context: the environment and directory given, `input` on stdin, stdout and stderr kept for the test, and
 * the fake gh answering in this process when the PATH finds it (test/_fake-gh.ts).
 */
export function testContext({ cwd, env, input, worker }: Omit<CliOptions, 'timeoutMs'>) {
  const out: string[] = []
  const err: string[] = []
  const reviewWorker = reviewWorkerOf(worker)
  const ctx: Context = processContext(
    {
      stdin: (async function* () {
        if (input !== undefined && input.length > 0) yield typeof input === 'string' ? Buffer.from(input) : input
      })(),
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
    },
    {
      env,
      cwd,
      home: homeOf(env, cwd),
      programs: { gh: fakeGhInProcess },
      ...(reviewWorker ? { reviewWorker } : {}),
    },
  )
  return { ctx, stdout: () => out.join(''), stderr: () => err.join('') }
}

/**
 * The CLI run in this process: `pair-loop <args>` through the dispatcher (scripts/pair-loop.ts) with a test Context,
 * as a process would run it, without starting one. The few tests where the process itself matters (exit codes through
 * the real binary, stdio, signals, runtimes, a CLI killed) use runCliProcess.
 */
export async function runCli(args: string[], { timeoutMs = 60_000, ...options }: CliOptions): Promise<CliResult> {
  const test = testContext(options)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`pair-loop ${args.join(' ')} (in-process) did not end in ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  try {
    const code = await Promise.race([dispatch(args, test.ctx), late])
    return withJson({ code, stdout: test.stdout(), stderr: test.stderr() })
  } finally {
    clearTimeout(timer)
  }
}

/** The CLI as a real process (the built dist under vitest, the sources under bun), stdin given, output collected. */
export async function runCliProcess(args: string[], options: CliOptions): Promise<CliResult> {
  return withJson(await runProcess([...CLI_COMMAND, ...args], options))
}

function withJson(result: ProcessResult): CliResult {
  let json: unknown
  try {
    json = JSON.parse(result.stdout)
  } catch {
    json = undefined
  }
  return { ...result, json }
}

type SandboxCliOptions = { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv }

/**
 * A fresh repo and home, and a CLI bound to them: the usual start of a test. `cli` runs a command in this process;
 * `cliProcess` starts the real CLI, for what only a process shows (its exit status, its streams, being killed).
 */
export function sandbox(files?: Record<string, string>, { worker }: Pick<CliOptions, 'worker'> = {}) {
  const repo = makeRepo(files)
  const env = isolatedEnv()
  const bound = (options: SandboxCliOptions): CliOptions => ({
    cwd: options.cwd ?? repo,
    env: { ...env, ...options.env },
    input: options.input,
    worker,
  })
  const cli = (args: string[], options: SandboxCliOptions = {}) => runCli(args, bound(options))
  const cliProcess = (args: string[], options: SandboxCliOptions = {}) => runCliProcess(args, bound(options))
  const state = (runId: string): RunState => readRun(runId, env.PAIR_LOOP_HOME)
  return { repo, env, home: env.PAIR_LOOP_HOME, cli, cliProcess, state }
}

/**
 * Record a reviewer round into state the way `review` does, from raw reviewer text
 * (for tests of reply/finish that need findings without running a reviewer). The review saw the snapshot the round
 * handed over (`tree`: another one, or null for a review that recorded none).
 */
export async function recordReview(
  home: string,
  runId: string,
  reviewerText: string,
  tool: 'claude' | 'codex' | 'custom' = 'codex',
  tree?: string | null,
): Promise<RunState> {
  const verdict = parseVerdict(reviewerText) ?? 'CHANGES_REQUESTED'
  // the run's home as the Context's: lib reads it there (a test's own process.env is left as it is)
  const { ctx } = testContext({ cwd: process.cwd(), env: { ...process.env, PAIR_LOOP_HOME: home } })
  await withContext(ctx, () =>
    changeRun(
      runId,
      (state) => {
        const now = new Date().toISOString()
        const claimed = {
          ...state,
          review_claim: {
            pid: process.pid,
            host: 'test',
            started_at: now,
            pid_start: null,
            expires_at: null,
            reviewer_pgid: null,
            reviewer_start: null,
          },
        }
        const review = {
          tool,
          fallback_used: false,
          verdict,
          findings: parseFindings(reviewerText),
          summary: reviewerProse(reviewerText),
          session_id: null,
          model: null,
          usage: null,
          cost: null,
          calls: 1,
          duration_ms: 0,
          raw_output_path: null,
          over_budget: false,
          at: now,
          tree: tree === undefined ? (state.rounds.at(-1)?.coder.tree ?? null) : tree,
        }
        return { state: applyReview(claimed, { review, pid: process.pid }).state, result: undefined }
      },
      home,
    ),
  )
  return readRun(runId, home)
}

/**
 * The fake gh (fixtures/gh) as a GitHub holding PRs `prs`, each with the repository's HEAD now as its head (as if
 * pushed): the environment to give `sb.cli` for a command that asks GitHub for a PR's head (finish --pr, verify).
 */
export function githubWithPrs(repo: string, prs: number[]): NodeJS.ProcessEnv {
  const dir = tempDir('pl-gh-')
  const head = git(repo, ['rev-parse', 'HEAD']).trim()
  for (const pr of prs) writeFileSync(join(dir, `pr-${pr}.json`), JSON.stringify({ head }))
  return { PATH: `${join(ROOT, 'fixtures', 'gh')}:${process.env.PATH ?? '/usr/bin:/bin'}`, FAKE_GH_DIR: dir }
}

/** For tests that run lib's git calls in their own process: the developer's git config kept out for the file's tests. */
export function withoutUserGitConfig(): void {
  const saved = {
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL,
    GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM,
  }
  beforeAll(() => {
    process.env.GIT_CONFIG_GLOBAL = '/dev/null'
    process.env.GIT_CONFIG_NOSYSTEM = '1'
  })
  afterAll(() => {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
  })
}
