// A config file that is not a regular file: a FIFO (reading one blocks until someone writes to it, and a read blocked
// in the main thread lets no signal handler run), a symbolic link to one, a directory. Each is named, never opened.
import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, mkdirSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_CONFIG_NAME } from '../../lib/run/config.ts'
import { configPath } from '../../lib/ground/paths.ts'
import { CLI_COMMAND, sandbox, tempDir } from '../_helpers.ts'
import { expectError, startRun } from '../_expect.ts'

/** A command that hangs is killed here: long enough for a slow machine, short next to a hang. */
const HANG_MS = 15_000

const mkfifo = (path: string) => {
  const made = spawnSync('mkfifo', [path])
  if (made.status !== 0) throw new Error(`mkfifo ${path}: ${made.stderr}`)
}

/** A sandbox whose repository has a FIFO named .pair-loop.json, git-excluded (untracked, never dirty). */
function withFifoConfig() {
  const sb = sandbox({ 'a.txt': 'a\n' })
  appendFileSync(join(sb.repo, '.git', 'info', 'exclude'), `${REPO_CONFIG_NAME}\n`)
  return { ...sb, fifo: () => mkfifo(join(sb.repo, REPO_CONFIG_NAME)), configFile: join(sb.repo, REPO_CONFIG_NAME) }
}

const cli = (sb: ReturnType<typeof sandbox>, args: string[]) =>
  new Promise<{ code: number | null; signal: string | null; stdout: string; ms: number }>((resolve) => {
    const started = Date.now()
    const [command, ...prefix] = CLI_COMMAND
    const child = spawn(command!, [...prefix, ...args], {
      cwd: sb.repo,
      env: sb.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, ms: Date.now() - started })
    })
  })

/** The one error of a command that ended by itself: config_invalid (exit 5). */
function invalidWithoutHanging(result: Awaited<ReturnType<typeof cli>>) {
  expect(result.signal, 'the command hung and was killed').toBeNull()
  expect(result.code).toBe(5)
  const error = JSON.parse(result.stdout).errors[0]
  expect(error.code).toBe('config_invalid')
  return error
}

describe('a FIFO in place of the repository’s .pair-loop.json', () => {
  it('does not hang status: the config reads as changed, and the run goes on with the frozen one', async () => {
    const sb = withFifoConfig()
    await startRun(sb)
    sb.fifo()
    const result = await cli(sb, ['status'])
    expect(result.signal, 'status hung and was killed').toBeNull()
    expect(JSON.parse(result.stdout)).toMatchObject({ config_changed: true, max_rounds: 3 })
  }, 30_000)

  it('does not hang status --wait once the wait is over', async () => {
    const sb = withFifoConfig()
    await startRun(sb)
    sb.fifo()
    const result = await cli(sb, ['status', '--wait', '1'])
    expect(result.signal, 'status --wait hung and was killed').toBeNull()
    expect(JSON.parse(result.stdout)).toMatchObject({ changed: false, config_changed: true })
  }, 30_000)

  it('is config_invalid at start, naming the file and what it is', async () => {
    const sb = withFifoConfig()
    sb.fifo()
    const error = invalidWithoutHanging(await cli(sb, ['start', '--task', 'x']))
    expect(error.path).toBe(sb.configFile)
    expect(error.message).toMatch(/is a FIFO \(named pipe\), not a regular file/)
  }, 30_000)
})

describe('the person’s config.json that is not a regular file', () => {
  it('as a symbolic link to a FIFO is config_invalid at start, naming the link', async () => {
    const sb = sandbox()
    const fifo = join(tempDir('pl-fifo-'), 'config.fifo')
    mkfifo(fifo)
    rmSync(configPath(sb.home)) // the sandbox wrote the test person's config; this test replaces it
    symlinkSync(fifo, configPath(sb.home))
    const error = invalidWithoutHanging(await cli(sb, ['start', '--task', 'x']))
    expect(error.path).toBe(configPath(sb.home))
    expect(error.message).toMatch(/FIFO/)
  }, 30_000)

  it('as a directory is config_invalid, not a failed read', async () => {
    const sb = sandbox()
    rmSync(configPath(sb.home)) // the sandbox wrote the test person's config; this test replaces it
    mkdirSync(configPath(sb.home))
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_invalid')
    expect(error).toMatchObject({ path: configPath(sb.home) })
    expect(error.message).toMatch(/is a directory, not a regular file/)
  })

  it('does not hang trust --show either', async () => {
    const sb = withFifoConfig()
    sb.fifo()
    expect(invalidWithoutHanging(await cli(sb, ['trust', '--show']))).toMatchObject({ path: sb.configFile })
  }, 30_000)
})

describe('a command blocked waiting', () => {
  it('still ends on SIGTERM with a FIFO in place of the config', async () => {
    const sb = withFifoConfig()
    await startRun(sb)
    sb.fifo()
    const [command, ...prefix] = CLI_COMMAND
    const child = spawn(command!, [...prefix, 'status', '--wait', '60'], { cwd: sb.repo, env: sb.env })
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    const started = Date.now()
    const killer = setTimeout(() => child.kill('SIGKILL'), HANG_MS)
    setTimeout(() => child.kill('SIGTERM'), 1_000)
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    clearTimeout(killer)
    expect(code).toBe(130)
    expect(JSON.parse(stdout).errors[0]).toMatchObject({ code: 'interrupted', signal: 'SIGTERM' })
    expect(Date.now() - started).toBeLessThan(8_000)
  }, 30_000)
})
