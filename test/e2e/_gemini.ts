// The e2e harness's Gemini CLI part (docs/reference/gemini-cli.md): the binary, a from-scratch environment that
// talks only to the mock model API, and the session files. Kept beside _harness.ts until the vendor registry lands.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI_DIR, IN_CI, tempDir } from './_harness.ts'

export const GEMINI_BIN = join(CLI_DIR, 'node_modules', '.bin', 'gemini')
/** The pin in setup.mjs. */
export const GEMINI_VERSION = '0.61.0'
/** A model the table prices; naming one also skips the CLI's router (a classifier call on a flash-lite model). */
export const GEMINI_MODEL = 'gemini-2.5-pro'

/** `gemini --version`, or null when it does not answer. */
function geminiVersion(): string | null {
  if (!existsSync(GEMINI_BIN)) return null
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'pl-e2e-ver-')))
  const out = spawnSync(GEMINI_BIN, ['--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 90_000, // it loads a ~96 MB bundle: 9 s on a loaded 2-core machine
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GEMINI_CLI_NO_RELAUNCH: 'true' },
  })
  rmSync(home, { recursive: true, force: true })
  return out.status === 0 ? `${out.stdout}`.trim() : null
}

/** Whether the Gemini tests can run: a loud skip locally when the pinned binary is missing, a failure under CI=true. */
export function requireGemini(): boolean {
  const version = geminiVersion()
  if (version === GEMINI_VERSION) return true
  const message = `pair-loop e2e: gemini ${GEMINI_VERSION} is not installed at ${GEMINI_BIN} (found: ${version ?? 'none'}); the Gemini tests are SKIPPED. Install: node test/e2e/setup.mjs`
  if (IN_CI) throw new Error(`CI=true and the e2e CLIs are missing: no skipping in CI.\n${message}`)
  process.stderr.write(`\n${'!'.repeat(100)}\n!!! ${message}\n${'!'.repeat(100)}\n\n`)
  return false
}

/** The settings that keep Gemini CLI offline and on an API key: no usage statistics, telemetry or update checks. */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
}

export interface GeminiDirs {
  /** HOME: nothing of Gemini's is written here (GEMINI_CLI_HOME moves it). */
  home: string
  /** GEMINI_CLI_HOME: the CLI keeps `.gemini/` (settings, sessions) under it. */
  geminiHome: string
  /** TMPDIR: the CLI writes its error reports to the OS temp folder. */
  tmp: string
  work: string
}

export function geminiDirs(): GeminiDirs {
  const root = tempDir('pl-e2e-gemini-')
  const dirs = {
    home: join(root, 'home'),
    geminiHome: join(root, 'gemini-home'),
    tmp: join(root, 'tmp'),
    work: join(root, 'work dir.x'),
  }
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true })
  return dirs
}

/** A from-scratch environment for `gemini -p` against the mock on `port` (writes the settings file). */
export function geminiEnv(port: number, dirs: GeminiDirs): Record<string, string> {
  mkdirSync(join(dirs.geminiHome, '.gemini'), { recursive: true })
  writeFileSync(join(dirs.geminiHome, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS, null, 2))
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dirs.home,
    GEMINI_CLI_HOME: dirs.geminiHome,
    TMPDIR: dirs.tmp,
    TZ: 'UTC',
    NO_COLOR: '1',
    GEMINI_API_KEY: 'mock-gemini-key',
    GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}`,
    GEMINI_TELEMETRY_ENABLED: 'false',
    // no second Node process with a bigger heap: half the start-up time, one process to wait for
    GEMINI_CLI_NO_RELAUNCH: 'true',
  }
}

/** The read-only reviewer's command line the registry module is expected to build (docs/reference/gemini-cli.md). */
export function geminiReviewerArgs({
  model = GEMINI_MODEL,
  sessionId,
  resume,
  approvalMode = 'plan',
}: {
  model?: string
  sessionId?: string
  resume?: string
  approvalMode?: 'plan' | 'default' | 'yolo'
}): string[] {
  return [
    '--skip-trust',
    '--approval-mode',
    approvalMode,
    '-o',
    'json',
    '-m',
    model,
    ...(sessionId ? ['--session-id', sessionId] : []),
    ...(resume ? ['--resume', resume] : []),
    '-p',
    '',
  ]
}

/** Every session file under the Gemini home, by project folder. */
export function geminiSessionFilesIn(geminiHome: string): string[] {
  const tmp = join(geminiHome, '.gemini', 'tmp')
  if (!existsSync(tmp)) return []
  return readdirSync(tmp).flatMap((project) => {
    const chats = join(tmp, project, 'chats')
    return existsSync(chats)
      ? readdirSync(chats)
          .filter((name) => name.endsWith('.jsonl'))
          .map((name) => join(chats, name))
      : []
  })
}
