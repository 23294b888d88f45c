// The e2e harness: the mock model API as a child process, clean environments for the real `claude` and `codex`
// CLIs (see shared/reference/real-reviewer-clis.md), the binaries' location, and a spawn with a wall-clock
// timeout and a process-group kill. Nothing here fakes a CLI: the tests run the real binaries.
import { spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { PRICE_TABLE } from '../../lib/cost/pricing.ts'
import type { CliFlags } from '../../lib/agents/types.ts'
import { agentOf } from '../../lib/agents/registry.ts'
import type { ReviewerCall } from '../../lib/agents/types.ts'
import { MOCK_OPENAI_KEY, claudeVars, codexConfigToml } from './mock-clients.mjs'

export const E2E_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = resolve(E2E_DIR, '..', '..')
/** Same rule as test/e2e/setup.mjs (which installs them). */
export const CLI_DIR = resolve(process.env.PAIR_LOOP_E2E_CLI_DIR || join(ROOT, '.cache', 'e2e-clis'))
export const CLAUDE_BIN = join(CLI_DIR, 'node_modules', '.bin', 'claude')
export const CODEX_BIN = join(CLI_DIR, 'node_modules', '.bin', 'codex')
export const MOCK_SERVER = join(E2E_DIR, 'mock-server.mjs')
/**
 * Wall clocks. A real CLI call takes 1-2 s; these only bound a hang. pair-loop's own reviewer timeout
 * (`review --timeout`, which kills the reviewer's process group) stays below the outer pair-loop timeout, and
 * both below TEST_TIMEOUT_MS, so a hang fails the test with a message instead of a runner timeout.
 */
export const CALL_TIMEOUT_MS = 40_000
export const REVIEW_TIMEOUT_S = 30
export const PAIR_LOOP_TIMEOUT_MS = 45_000
export const TEST_TIMEOUT_MS = 180_000
export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '')
const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined'
/** The mock always runs under Node (under `bun test`, process.execPath is bun). */
const NODE = process.env.E2E_NODE ?? (isBun ? 'node' : process.execPath)

/** A model Claude Code prices (its default, claude-opus-4-8, is priced too, but tests compare with this one). */
export const CLAUDE_MODEL = 'claude-sonnet-4-5-20250929'
/** What the mock reports unless a script entry overrides it. Keep in sync with mock-server.mjs. */
export const MOCK_USAGE = {
  anthropic: {
    input_tokens: 1234,
    cache_creation_input_tokens: 789,
    cache_read_input_tokens: 4321,
    output_tokens: 56,
    cache_creation: { ephemeral_5m_input_tokens: 489, ephemeral_1h_input_tokens: 300 },
  },
  /** As `codex exec --json` reports it in turn.completed. */
  codex: {
    input_tokens: 2345,
    cached_input_tokens: 1024,
    cache_write_input_tokens: 256,
    output_tokens: 67,
    reasoning_output_tokens: 12,
  },
} as const
export const MOCK_DEFAULT_TEXT =
  'I read the task and the diff.\nNo problems found: the change does what the task asks.\n\nVERDICT: APPROVED'

/** USD per million tokens (transcripts-and-pricing.md §5). */
export const SONNET_4_5_PRICES = { input: 3, output: 15, cache_write_5m: 3.75, cache_write_1h: 6, cache_read: 0.3 }

/** The Claude cost formula (transcripts-and-pricing.md §1.6). */
export function claudeCost(
  usage: {
    input_tokens: number
    output_tokens: number
    cache_read_input_tokens: number
    cache_creation_input_tokens: number
    cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number }
  },
  price = SONNET_4_5_PRICES,
): number {
  const m5 = usage.cache_creation ? usage.cache_creation.ephemeral_5m_input_tokens : usage.cache_creation_input_tokens
  const h1 = usage.cache_creation ? usage.cache_creation.ephemeral_1h_input_tokens : 0
  return (
    (usage.input_tokens * price.input +
      usage.output_tokens * price.output +
      m5 * price.cache_write_5m +
      h1 * price.cache_write_1h +
      usage.cache_read_input_tokens * price.cache_read) /
    1_000_000
  )
}

/** gpt-5.5, the model in the Codex config.toml, at pair-loop's table's prices (the test checks them against §5's 0.009447). */
const GPT_5_5 = PRICE_TABLE['gpt-5.5']!
export const GPT_5_5_PRICES = {
  input: GPT_5_5.input,
  cached_input: GPT_5_5.cache_read,
  cache_write: GPT_5_5.cache_write_5m,
  output: GPT_5_5.output,
}

/** The Codex cost formula (transcripts-and-pricing.md §2.4): input includes cached and cache writes; output includes reasoning. */
export function codexCost(
  usage: { input_tokens: number; cached_input_tokens: number; cache_write_input_tokens: number; output_tokens: number },
  price = GPT_5_5_PRICES,
): number {
  const uncached = usage.input_tokens - usage.cached_input_tokens - usage.cache_write_input_tokens
  return (
    (uncached * price.input +
      usage.cached_input_tokens * price.cached_input +
      usage.cache_write_input_tokens * price.cache_write +
      usage.output_tokens * price.output) /
    1_000_000
  )
}

const createdDirs = new Set<string>()

/** A temp dir, removed by cleanupTempDirs() (kept when PAIR_LOOP_E2E_KEEP=1, for debugging). */
export function tempDir(prefix = 'pl-e2e-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  createdDirs.add(dir)
  return dir
}

/** Also remove this dir at cleanup (e.g. the temp roots test/_helpers.ts made). */
export function removeLater(dir: string): void {
  createdDirs.add(dir)
}

/** Remove every temp dir this file made (a fresh CODEX_HOME alone is ~1.5 MB). Call after stopping the mock. */
export function cleanupTempDirs(): void {
  if (process.env.PAIR_LOOP_E2E_KEEP === '1') {
    if (createdDirs.size) process.stderr.write(`e2e: kept ${createdDirs.size} temp dirs (PAIR_LOOP_E2E_KEEP=1)\n`)
    return
  }
  for (const dir of createdDirs) rmSync(dir, { recursive: true, force: true })
  createdDirs.clear()
}

// ---------------------------------------------------------------------------------------------------------------
// The binaries

let availability: { ok: boolean; reason: string } | undefined

function answersVersion(bin: string): string | null {
  if (!existsSync(bin)) return null
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'pl-e2e-ver-')))
  const out = spawnSync(bin, ['--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000,
    killSignal: 'SIGKILL',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  })
  rmSync(home, { recursive: true, force: true })
  return out.status === 0 ? `${out.stdout}`.trim() : null
}

export function clisAvailable(): { ok: boolean; reason: string } {
  if (!availability) {
    const claude = answersVersion(CLAUDE_BIN)
    const codex = answersVersion(CODEX_BIN)
    availability =
      claude && codex
        ? { ok: true, reason: `claude ${claude}, ${codex}` }
        : {
            ok: false,
            reason: `claude: ${claude ?? `missing (${CLAUDE_BIN})`}; codex: ${codex ?? `missing (${CODEX_BIN})`}`,
          }
  }
  return availability
}

/**
 * Whether the real-CLI tests can run. Binaries missing: locally a LOUD skip (returns false, use it with
 * `describe.skipIf(!requireClis())`); under CI=true it throws, so the suite fails instead of silently skipping.
 */
export function requireClis(): boolean {
  const { ok, reason } = clisAvailable()
  if (ok) return true
  const bar = '!'.repeat(100)
  const message = [
    bar,
    '!!! pair-loop e2e: the real claude / codex CLIs are NOT installed; the real-CLI tests are SKIPPED.',
    `!!! ${reason}`,
    '!!! Install them (once, ~660 MB into .cache/e2e-clis/):  node test/e2e/setup.mjs',
    bar,
  ].join('\n')
  if (IN_CI) throw new Error(`CI=true and the e2e CLIs are missing: no skipping in CI.\n${message}`)
  process.stderr.write(`\n${message}\n\n`)
  return false
}

// ---------------------------------------------------------------------------------------------------------------
// The mock model API

export interface MockRequest {
  n: number
  time: string
  method: string
  path: string
  url: string
  api: 'anthropic' | 'openai' | 'gemini' | null
  bytes: number
  model: string | null
  stream: boolean | null
  max_tokens: number | null
  user_agent: string | null
  auth: 'x-api-key' | 'x-goog-api-key' | 'bearer' | 'none'
  scripted: boolean
  label: string | null
  /** The request asked for a structured final answer (Claude Code's StructuredOutput tool, Codex's text.format). */
  wants_structured: boolean | null
  status: number
  /** What a model request offered the model (null for other requests): see offered() in mock-server.mjs. */
  offered: Offered | null
  body_file: string | null
}

export interface Offered {
  /** Tool names, sorted. */
  tools: string[]
  /** Codex's sandbox mode, as its permissions instructions state it. */
  sandbox: string | null
  /** Claude Code's additional working directories (--add-dir). */
  added_dirs: string[]
  /** The files Claude Code loaded as instructions (CLAUDE.md and kin), by path. */
  instruction_files: string[]
  /** The text of each AGENTS.md block Codex sent. */
  agents_md: string[]
  /** What Claude Code's hooks said. */
  hook_output: string[]
}

export interface ScriptEntry {
  api?: 'anthropic' | 'openai' | 'gemini'
  /** Gemini: answer only a request for this model (see mock-server.mjs). */
  model?: string
  text?: string
  blocks?: string[]
  usage?: Record<string, unknown>
  status?: number
  error?: string
  delay?: number
  stall?: number | true
  drop?: boolean
  label?: string
  /** The structured answer (see mock-server.mjs); false: text only; absent: read from `text`. */
  structured?: unknown
  /** A tool the model calls (Anthropic tool_use, Gemini functionCall); `input_from` fills one input from the request. */
  tool?: {
    name: string
    input?: Record<string, unknown>
    input_from?: { key: string; patterns: string[]; suffix?: string }
  }
  /** An output item Codex runs (OpenAI Responses: function_call, tool_search_call). */
  call?: Record<string, unknown>
  /** Answer every request whose latest tool result contains this, staying first in the queue. */
  repeat_while?: string
}

export interface MockServer {
  port: number
  /** For ANTHROPIC_BASE_URL: no /v1 (Claude Code appends /v1/messages). */
  anthropicBaseUrl: string
  /** For the Codex provider's base_url: with /v1 (Codex appends /responses). */
  openaiBaseUrl: string
  pid: number
  dir: string
  logFile: string
  scriptFile: string
  dumpDir: string
  /** Every request so far, in order. */
  requests(): MockRequest[]
  /** The model calls so far (POST …/messages, …/responses and …:generateContent / :streamGenerateContent). */
  modelCalls(): MockRequest[]
  /** The parsed JSON body of a request. */
  body(request: MockRequest): any
  /** Replace the queue of scripted replies. */
  setScript(entries: ScriptEntry[]): void
  /** What is left of the queue. */
  script(): ScriptEntry[]
  stop(): Promise<void>
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The mock model API of a describe block: started before its tests (after `before`), stopped after them, with the
 * block's temp folders removed. Read it only inside a test or a hook. */
export function useMock(before?: () => void): MockServer {
  let server: MockServer | undefined
  beforeAll(async () => {
    before?.()
    server = await startMock()
  }, 240_000)
  afterAll(async () => {
    await server?.stop()
    cleanupTempDirs()
  })
  return new Proxy({} as MockServer, {
    get(_, key) {
      if (!server) throw new Error('the mock model API is not started: use it inside a test')
      return Reflect.get(server, key)
    },
  })
}

export async function startMock({
  script = [],
  replyText,
  env: extraEnv = {},
}: {
  script?: ScriptEntry[]
  replyText?: string
  /** More of the mock's environment, e.g. MOCK_BILL_CACHE (see mock-server.mjs). */
  env?: Record<string, string>
} = {}): Promise<MockServer> {
  const dir = tempDir('pl-e2e-mock-')
  const portFile = join(dir, 'port')
  const logFile = join(dir, 'requests.jsonl')
  const scriptFile = join(dir, 'script.json')
  const dumpDir = join(dir, 'bodies')
  writeFileSync(scriptFile, JSON.stringify(script))
  writeFileSync(logFile, '')
  const errFd = openSync(join(dir, 'mock.stderr'), 'a')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    MOCK_PORT: '0',
    MOCK_PORT_FILE: portFile,
    MOCK_LOG_FILE: logFile,
    MOCK_SCRIPT_FILE: scriptFile,
    MOCK_DUMP_DIR: dumpDir,
    MOCK_PARENT_PID: String(process.pid),
    MOCK_MAX_LIFETIME_S: '900',
  }
  if (replyText !== undefined) env.MOCK_REPLY_TEXT = replyText
  Object.assign(env, extraEnv)
  const child = spawn(NODE, [MOCK_SERVER], { env, stdio: ['ignore', 'ignore', errFd], detached: true })
  closeSync(errFd)
  const pid = child.pid
  if (!pid) throw new Error(`could not start the mock server (${NODE} ${MOCK_SERVER})`)
  let exited = false
  child.on('exit', () => (exited = true))
  child.unref()
  const port = await waitFor(
    () => {
      if (exited) throw new Error(`mock server exited early: ${readFileSync(join(dir, 'mock.stderr'), 'utf8')}`)
      if (!existsSync(portFile)) return undefined
      const n = Number(readFileSync(portFile, 'utf8').trim())
      return n > 0 ? n : undefined
    },
    5_000,
    'the mock server port file',
  )

  const requests = (): MockRequest[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as MockRequest)
  return {
    port,
    anthropicBaseUrl: `http://127.0.0.1:${port}`,
    openaiBaseUrl: `http://127.0.0.1:${port}/v1`,
    pid,
    dir,
    logFile,
    scriptFile,
    dumpDir,
    requests,
    modelCalls: () => requests().filter((r) => r.api !== null),
    body: (request) => (request.body_file ? JSON.parse(readFileSync(request.body_file, 'utf8')) : undefined),
    setScript: (entries) => writeFileSync(scriptFile, JSON.stringify(entries)),
    script: () => JSON.parse(readFileSync(scriptFile, 'utf8')) as ScriptEntry[],
    async stop() {
      if (!alive(pid)) return
      try {
        process.kill(pid, 'SIGTERM')
      } catch {}
      try {
        await waitFor(() => (alive(pid) && !exited ? undefined : true), 3_000, 'the mock server to stop')
      } catch {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
    },
  }
}

/** A loopback port nothing listens on (bound, then released). */
export function unusedPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Clean environments

export interface AgentDirs {
  root: string
  home: string
  claudeConfigDir: string
  codexHome: string
  /** A work dir whose name has a space and a dot (exercises Claude's project-folder rule). */
  work: string
}

export function agentDirs(): AgentDirs {
  const root = tempDir('pl-e2e-')
  const dirs = {
    root,
    home: join(root, 'home'),
    claudeConfigDir: join(root, 'claude-config'),
    codexHome: join(root, 'codex-home'),
    work: join(root, 'work dir.x'),
  }
  for (const dir of [dirs.home, dirs.claudeConfigDir, dirs.codexHome, dirs.work]) mkdirSync(dir, { recursive: true })
  return dirs
}

/** Everything Claude Code needs to talk only to the mock (reference §2.1); Codex's config.toml (§3.1). */
export { claudeVars, codexConfigToml }

export function writeCodexConfig(codexHome: string, port: number): void {
  mkdirSync(codexHome, { recursive: true })
  writeFileSync(join(codexHome, 'config.toml'), codexConfigToml(port))
}

function baseVars(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TZ: 'UTC', NO_COLOR: '1' }
}

/** A from-scratch environment for `claude -p`. */
export function claudeEnv(port: number, dirs: Pick<AgentDirs, 'home' | 'claudeConfigDir'>): Record<string, string> {
  return { ...baseVars(dirs.home), CLAUDE_CONFIG_DIR: dirs.claudeConfigDir, ...claudeVars(port) }
}

/** A from-scratch environment for `codex exec` (writes $CODEX_HOME/config.toml). */
export function codexEnv(port: number, dirs: Pick<AgentDirs, 'home' | 'codexHome'>): Record<string, string> {
  writeCodexConfig(dirs.codexHome, port)
  return { ...baseVars(dirs.home), CODEX_HOME: dirs.codexHome, MOCK_API_KEY: MOCK_OPENAI_KEY }
}

/**
 * Add what both reviewer CLIs need to an environment that already names HOME, CLAUDE_CONFIG_DIR, CODEX_HOME and
 * PAIR_LOOP_HOME (e.g. test/_helpers.ts isolatedEnv()). The coder's CLI reads them from the environment; the reviewer's
 * environment is built, not inherited (lib/review/reviewer-env.ts), so the test person's config names them for it
 * (`pair_loop.reviewer_env`): the mock's base URL reaches the reviewer only that way.
 */
export function withReviewerVars<T extends Record<string, string | undefined>>(env: T, port: number): T {
  const codexHome = env.CODEX_HOME
  if (!codexHome || !env.CLAUDE_CONFIG_DIR || !env.HOME || !env.PAIR_LOOP_HOME)
    throw new Error('withReviewerVars: env needs HOME, CLAUDE_CONFIG_DIR, CODEX_HOME and PAIR_LOOP_HOME')
  mkdirSync(env.CLAUDE_CONFIG_DIR, { recursive: true })
  writeCodexConfig(codexHome, port)
  const vars = { ...claudeVars(port), MOCK_API_KEY: MOCK_OPENAI_KEY }
  const reviewerEnv = { HOME: env.HOME, CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR, CODEX_HOME: codexHome, ...vars }
  addToHomeConfig(env.PAIR_LOOP_HOME, { reviewer_env: reviewerEnv })
  return { ...env, ...vars } as T
}

/** Sets keys of the pair_loop section of `$PAIR_LOOP_HOME/config.json`, keeping the rest (reviewer_env merged). */
export function addToHomeConfig(pairLoopHome: string, keys: Record<string, unknown>): void {
  const file = join(pairLoopHome, 'config.json')
  const config = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}
  const section = config.pair_loop ?? {}
  const reviewerEnv = { ...section.reviewer_env, ...(keys.reviewer_env as object | undefined) }
  config.pair_loop = { ...section, ...keys, reviewer_env: reviewerEnv }
  mkdirSync(pairLoopHome, { recursive: true })
  writeFileSync(file, JSON.stringify(config))
}

// ---------------------------------------------------------------------------------------------------------------
// Running a binary

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
  timedOut: boolean
}

function killGroup(pid: number | undefined): void {
  if (!pid) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {}
}

/**
 * Spawn a binary directly (never through npx) in its own process group: `input` goes to stdin, which is then
 * closed (no input → stdin is /dev/null); after `timeoutMs` the whole group is killed. Leftover group members
 * are killed when the leader exits.
 */
export function runBinary(
  bin: string,
  args: string[],
  {
    cwd,
    env,
    input,
    timeoutMs = CALL_TIMEOUT_MS,
  }: { cwd: string; env: Record<string, string | undefined>; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolveRun, reject) => {
    const started = Date.now()
    const child = spawn(bin, args, {
      cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let timedOut = false
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk))
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      killGroup(child.pid)
      resolveRun({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: Date.now() - started,
        timedOut,
      })
    })
    if (input !== undefined) {
      child.stdin?.on('error', () => {})
      child.stdin?.end(input)
    }
  })
}

/**
 * pair-loop's own command line for a reviewer CLI (its module in lib/agents/), so the harness cannot
 * drift from the product. `flags`: the optional flags the CLI is taken to list in its --help (none by default: the
 * command line every version gets, answered in text); `cwd`: where the CLI runs, when not in `repo`.
 */
export function reviewerCommand(
  tool: 'claude' | 'codex',
  {
    repo,
    cwd,
    model = null,
    flags = new Set<string>(),
    call = {},
  }: { repo: string; cwd?: string; model?: string | null; flags?: CliFlags; call?: Partial<ReviewerCall> },
): string[] {
  const bin = tool === 'claude' ? CLAUDE_BIN : CODEX_BIN
  const places = { copy: repo, cwd: cwd ?? repo, model, flags }
  return agentOf(tool).reviewer.argv(
    bin,
    { lastMessageFile: '', sessionId: null, schemaFile: '', maxBudgetUsd: null, ...call },
    places,
  )
}

/** A reviewer's `claude -p` (reviewerCommand, priced model) in `cwd`, the prompt on stdin. */
export function runClaudeReviewer(
  prompt: string,
  { cwd, env, timeoutMs = CALL_TIMEOUT_MS }: { cwd: string; env: Record<string, string>; timeoutMs?: number },
) {
  const [bin, ...args] = reviewerCommand('claude', { repo: cwd, model: CLAUDE_MODEL })
  return runBinary(bin!, args, { cwd, env, input: prompt, timeoutMs })
}

/** A coder's (or any plain) `claude -p --output-format json --model <priced model>`, the prompt on stdin: every tool. */
export function runClaude(
  prompt: string,
  {
    cwd,
    env,
    args = [],
    timeoutMs = CALL_TIMEOUT_MS,
  }: { cwd: string; env: Record<string, string>; args?: string[]; timeoutMs?: number },
) {
  return runBinary(CLAUDE_BIN, ['-p', '--output-format', 'json', '--model', CLAUDE_MODEL, ...args], {
    cwd,
    env,
    input: prompt,
    timeoutMs,
  })
}

/** A reviewer's `codex exec` (reviewerCommand) in `cwd`, the prompt on stdin, its last message into `lastMessageFile`. */
export function runCodex(
  prompt: string,
  {
    cwd,
    env,
    lastMessageFile,
    timeoutMs = CALL_TIMEOUT_MS,
  }: { cwd: string; env: Record<string, string>; lastMessageFile: string; timeoutMs?: number },
) {
  const [bin, ...args] = reviewerCommand('codex', { repo: cwd, call: { lastMessageFile } })
  return runBinary(bin!, args, { cwd, env, input: prompt, timeoutMs })
}

export function parseJsonLines(text: string): any[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line)
      } catch {
        return { unparsed: line }
      }
    })
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  )
}

/** `<configDir>/projects/<any folder>/<sessionId>.jsonl` */
export function findClaudeTranscript(claudeConfigDir: string, sessionId: string): string | undefined {
  const projects = join(claudeConfigDir, 'projects')
  if (!existsSync(projects)) return undefined
  for (const folder of readdirSync(projects)) {
    const path = join(projects, folder, `${sessionId}.jsonl`)
    if (existsSync(path)) return path
  }
  return undefined
}

/** `<codexHome>/sessions/YYYY/MM/DD/rollout-*-<threadId>.jsonl` */
export function findCodexRollout(codexHome: string, threadId: string): string | undefined {
  return walk(join(codexHome, 'sessions')).find((path) => path.endsWith(`-${threadId}.jsonl`))
}

// ---------------------------------------------------------------------------------------------------------------
// pair-loop itself, with the same wall-clock / process-group discipline

export interface PairLoopResult extends RunResult {
  /** The one JSON document on stdout, or undefined. */
  json: any
}

/**
 * Run the pair-loop CLI (`command` = test/_helpers.ts CLI_COMMAND: the built dist under vitest, the sources under
 * bun) in its own process group with a wall-clock timeout. The reviewer it spawns has a group of its own, killed
 * by pair-loop's `review --timeout`; keep that below `timeoutMs`.
 */
export async function runPairLoop(
  command: string[],
  args: string[],
  {
    cwd,
    env,
    input,
    timeoutMs = PAIR_LOOP_TIMEOUT_MS,
  }: { cwd: string; env: Record<string, string | undefined>; input?: string; timeoutMs?: number },
): Promise<PairLoopResult> {
  const [bin, ...prefix] = command
  const result = await runBinary(bin!, [...prefix, ...args], { cwd, env, input: input ?? '', timeoutMs })
  let json: unknown
  try {
    json = JSON.parse(result.stdout)
  } catch {
    json = undefined
  }
  return { ...result, json }
}

/** The prompt pair-loop sent (the text holding `task`), out of a recorded request body (Anthropic `messages`, Responses
 * `input` or Gemini `contents`). */
export function promptIn(body: any, task: string): string | undefined {
  const texts: string[] = []
  const collect = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value)
    else if (Array.isArray(value)) value.forEach(collect)
    else if (value && typeof value === 'object') Object.values(value).forEach(collect)
  }
  collect(body?.messages ?? body?.input ?? body?.contents)
  // the latest: a continued session's request holds the earlier rounds' prompts first
  return texts.findLast((text) => text.includes(task))
}

/** Every string in a request body (system prompt, instructions, tools, messages), however deep. */
export function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value)
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into)
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into)
  return into
}

// ---------------------------------------------------------------------------------------------------------------
// A real `claude -p` as the coder, its Bash tool calls scripted by the mock

/** Writes `<dir>/pair-loop`, a shell wrapper running `command` (test/_helpers.ts CLI_COMMAND), for a coder's PATH. */
export function writePairLoopWrapper(dir: string, command: string[]): void {
  const quoted = command.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ')
  writeFileSync(join(dir, 'pair-loop'), `#!/bin/sh\nexec ${quoted} "$@"\n`)
  chmodSync(join(dir, 'pair-loop'), 0o755)
}

/** A mock reply in which the coder's model runs `command` with Claude Code's Bash tool. */
export const bashCall = (label: string, command: string, extra: Partial<ScriptEntry> = {}): ScriptEntry => ({
  api: 'anthropic',
  label,
  text: `Running ${command.split(' ').slice(0, 2).join(' ')}.`,
  tool: { name: 'Bash', input: { command, description: label } },
  ...extra,
})

/** Every tool result the coder's model was sent, in order, from the last coder request's body. */
export function toolResults(mock: MockServer, calls: MockRequest[]): string[] {
  const last = calls.filter((call) => call.api === 'anthropic').at(-1)
  const messages: any[] = mock.body(last!)?.messages ?? []
  return messages
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block) => block.type === 'tool_result')
    .map((block) =>
      typeof block.content === 'string'
        ? block.content
        : (block.content ?? []).map((part: { text?: string }) => part.text ?? '').join(''),
    )
}
