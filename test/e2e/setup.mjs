#!/usr/bin/env node
// Installs the real reviewer CLIs the e2e suite drives into a git-ignored cache, .cache/e2e-clis/
// (its own package.json; hundreds of MB, so never dev dependencies of pair-loop itself).
// Idempotent: when every binary already answers `--version` with its pinned version, it does nothing.
// Prints the absolute binary paths as one JSON document on stdout; progress and errors go to stderr.
// Exit 0 when every CLI is usable, 1 with a clear message when the install failed.
//
//   node test/e2e/setup.mjs            install if needed, print {"claude": "...", "codex": "...", "gemini": "...", ...}
//   node test/e2e/setup.mjs --check    only check, never install (exit 1 when missing)
//
// Importable too: `import { CLI_DIR, CLAUDE_BIN, CODEX_BIN, GEMINI_BIN, ensureClis } from './setup.mjs'`.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** PAIR_LOOP_E2E_CLI_DIR moves the cache (e.g. a CI cache mount); default <repo>/.cache/e2e-clis. */
export const CLI_DIR = resolve(process.env.PAIR_LOOP_E2E_CLI_DIR || join(ROOT, '.cache', 'e2e-clis'))
export const CLAUDE_BIN = join(CLI_DIR, 'node_modules', '.bin', 'claude')
export const CODEX_BIN = join(CLI_DIR, 'node_modules', '.bin', 'codex')
export const GEMINI_BIN = join(CLI_DIR, 'node_modules', '.bin', 'gemini')

/** Exact pins: the CLIs change flags and output fields between minor releases. */
export const PINS = {
  '@anthropic-ai/claude-code': '2.1.197',
  '@openai/codex': '0.171.0',
  '@google/gemini-cli': '0.61.0',
}

const INSTALL_TIMEOUT_MS = 10 * 60_000
const VERSION_TIMEOUT_MS = 90_000 // gemini loads a ~96 MB bundle: 9-16 s on a loaded 2-core machine

function log(message) {
  process.stderr.write(`[e2e-setup] ${message}\n`)
}

/** `<bin> --version` with a clean-ish env and a timeout; the version string, or null when it does not answer. */
export function binaryVersion(bin) {
  if (!existsSync(bin)) return null
  const home = process.env.HOME ?? '/tmp'
  const out = spawnSync(bin, ['--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: VERSION_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      GEMINI_CLI_NO_RELAUNCH: 'true',
    },
  })
  if (out.status !== 0) return null
  return `${out.stdout}`.trim() || null
}

/** Every binary present and at its pinned version? Returns {ok, claude, codex, gemini} (versions or null). */
export function checkClis() {
  const claude = binaryVersion(CLAUDE_BIN)
  const codex = binaryVersion(CODEX_BIN)
  const gemini = binaryVersion(GEMINI_BIN)
  const ok =
    claude?.includes(PINS['@anthropic-ai/claude-code']) &&
    codex?.includes(PINS['@openai/codex']) &&
    gemini?.includes(PINS['@google/gemini-cli'])
  return { ok: Boolean(ok), claude, codex, gemini }
}

/** The versions found, for messages: "claude: 2.1.197, codex: missing, gemini: 0.61.0". */
function describe(found, missing) {
  return ['claude', 'codex', 'gemini'].map((name) => `${name}: ${found[name] ?? missing}`).join(', ')
}

/** The result document: binary paths and versions. */
function result(found, installed) {
  return {
    claude: CLAUDE_BIN,
    codex: CODEX_BIN,
    gemini: GEMINI_BIN,
    claude_version: found.claude,
    codex_version: found.codex,
    gemini_version: found.gemini,
    installed,
  }
}

function writeCachePackage() {
  mkdirSync(CLI_DIR, { recursive: true })
  const pkg = {
    name: 'pair-loop-e2e-clis',
    private: true,
    description: 'Real reviewer CLIs for pair-loop e2e tests (installed by test/e2e/setup.mjs; git-ignored).',
    dependencies: { ...PINS },
    // What `npm install-scripts approve @anthropic-ai/claude-code` writes. Claude Code's postinstall hard-links
    // the native binary into bin/claude.exe; without it the binary is a stub. Codex has no install script.
    // (Name-only: a pinned `pkg@version` key is not honoured when the lockfile has no "resolved" URLs,
    // e.g. with omit-lockfile-registry-resolved; the version is pinned in dependencies anyway.)
    // Gemini CLI's optional keytar and node-pty install scripts stay unapproved: a headless run needs neither.
    allowScripts: { '@anthropic-ai/claude-code': true },
  }
  const path = join(CLI_DIR, 'package.json')
  const text = `${JSON.stringify(pkg, null, 2)}\n`
  if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writeFileSync(path, text)
}

function run(command, args, timeout) {
  log(`$ ${command} ${args.join(' ')}  (in ${CLI_DIR})`)
  const out = spawnSync(command, args, {
    cwd: CLI_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout,
    killSignal: 'SIGKILL',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  })
  if (out.error) return `${command} failed to run: ${out.error.message}`
  if (out.signal) return `${command} was killed (${out.signal}) after ${Math.round(timeout / 1000)} s`
  if (out.status !== 0) return `${command} ${args[0]} exited ${out.status}`
  return null
}

/** The Claude Code native binary, if the postinstall ran (the ignored-scripts stub is ~500 bytes). */
function claudeNativeInstalled() {
  const exe = join(CLI_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe')
  try {
    return statSync(exe).size > 1_000_000
  } catch {
    return false
  }
}

/** Install when needed. Returns {claude, codex, gemini, versions, installed}; throws with a clear message on failure. */
export function ensureClis({ install = true } = {}) {
  const before = checkClis()
  if (before.ok) return result(before, false)
  if (!install) {
    throw new Error(
      `real CLIs not installed in ${CLI_DIR} (${describe(before, 'missing')}); run: node test/e2e/setup.mjs`,
    )
  }
  log(
    `installing ${Object.entries(PINS)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')} into ${CLI_DIR} (~760 MB, once)`,
  )
  const started = Date.now()
  writeCachePackage()
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const failure = run(
    npm,
    ['install', '--no-audit', '--no-fund', '--include=optional', '--loglevel=warn'],
    INSTALL_TIMEOUT_MS,
  )
  if (failure)
    throw new Error(
      `npm install of the e2e CLIs failed: ${failure}. Is the npm registry reachable? Cache dir: ${CLI_DIR}`,
    )
  if (!claudeNativeInstalled()) {
    // Postinstall skipped (e.g. scripts disabled by user config): run it directly, as its stub message advises.
    log('Claude Code postinstall did not run; running install.cjs')
    const again = run(
      process.execPath,
      [join(CLI_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'install.cjs')],
      120_000,
    )
    if (again) throw new Error(`Claude Code postinstall failed: ${again}`)
  }
  const after = checkClis()
  if (!after.ok) {
    throw new Error(
      `installed, but the binaries do not answer --version with the pinned versions ` +
        `(${describe(after, 'no answer')}); paths ${CLAUDE_BIN}, ${CODEX_BIN}, ${GEMINI_BIN}`,
    )
  }
  log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result(after, true)
}

const invokedDirectly = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (invokedDirectly) {
  const checkOnly = process.argv.includes('--check')
  try {
    const result = ensureClis({ install: !checkOnly })
    log(`claude ${result.claude_version}: ${result.claude}`)
    log(`codex  ${result.codex_version}: ${result.codex}`)
    log(`gemini ${result.gemini_version}: ${result.gemini}`)
    process.stdout.write(`${JSON.stringify(result)}\n`)
  } catch (error) {
    log(`ERROR: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
}
