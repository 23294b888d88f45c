// The filesystem misbehaving: a home we cannot write, a disk that fills up mid-write, a run file swapped for a
// symbolic link, and paths with spaces and non-ASCII characters. Each ends with a clear code and nothing lost.
import { spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { writeFileAtomic } from '../../lib/ground/fsutil.ts'
import { renderHandoff } from '../../lib/run/handoff.ts'
import { runStatePath, runsDir } from '../../lib/ground/paths.ts'
import {
  CLI_COMMAND,
  git,
  isolatedEnv,
  makeRepo,
  recordReview,
  runCli,
  sandbox,
  tempDir,
  writeFiles,
  writeTestHomeConfig,
  type CliResult,
} from '../_helpers.ts'
import { expectError, expectOk, reviewWith, runInReview, startRun } from '../_expect.ts'
import { reviewArgs } from '../_review.ts'

/** A directory this process cannot create anything in: chmod 0o500 where that works; as root (where it does not), a path under a regular file. */
function unwritableHome(): { home: string; how: string } {
  const base = tempDir('pl-ro-')
  const dir = join(base, 'home')
  mkdirSync(dir)
  chmodSync(dir, 0o500)
  try {
    writeFileSync(join(dir, 'probe'), 'x')
    rmSync(join(dir, 'probe'))
    chmodSync(dir, 0o700)
  } catch {
    return { home: dir, how: 'chmod 0o500' }
  }
  writeFileSync(join(base, 'a-file'), 'not a directory\n')
  return { home: join(base, 'a-file', 'home'), how: 'a path under a regular file (ENOTDIR)' }
}

/** The CLI under `ulimit -f`: no file it writes may grow past `blocks` × 512 bytes (POSIX sh counts 512-byte blocks). */
function cliWithFileLimit(
  args: string[],
  blocks: number,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<CliResult & { signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `ulimit -f ${blocks} && exec "$@"`, 'sh', ...CLI_COMMAND, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {}
      resolve({ code, signal, stdout, stderr, json })
    })
  })
}

describe('filesystem: PAIR_LOOP_HOME unwritable', () => {
  it('refuses start with a clear code naming the path, never a crash, and leaves the repository untouched', async () => {
    const { home, how } = unwritableHome()
    const repo = makeRepo()
    const env = isolatedEnv({ PAIR_LOOP_HOME: home })
    const result = await runCli(['start', '--task', 't'], { cwd: repo, env })
    expect(result.code, `${how}: ${result.stdout}`).not.toBe(0)
    const error = result.json.errors[0]
    // the disk refused: io_error (74) with the path and errno, a message that says what is wrong and where
    expect(error.code).toBe('io_error')
    expect(result.code).toBe(74)
    expect(error.message).toContain(home)
    expect(error.message).toMatch(/PAIR_LOOP_HOME|ENOTDIR|EACCES|not a directory|permission denied/i)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(join(repo, 'HANDOFF.md'))).toBe(false)
    expect(git(repo, ['status', '--porcelain'])).toBe('')
  })

  it('refuses start with io_error saying what is wrong when PAIR_LOOP_HOME/runs cannot be created', async () => {
    const home = tempDir('pl-home-')
    writeFileSync(join(home, 'runs'), 'a file where the runs folder should be\n')
    const repo = makeRepo()
    const error = expectError(
      await runCli(['start', '--task', 't'], { cwd: repo, env: isolatedEnv({ PAIR_LOOP_HOME: home }) }),
      'io_error',
    )
    expect(error).toMatchObject({ path: join(home, 'runs'), errno: expect.stringMatching(/^E/) })
    expect(error.message).toMatch(/PAIR_LOOP_HOME is a writable directory/)
    expect(error.stack).toBeUndefined()
    expect(existsSync(join(repo, 'HANDOFF.md'))).toBe(false)
  })

  it('still answers status --all and codes, which write nothing', async () => {
    const { home } = unwritableHome()
    const repo = makeRepo()
    const env = isolatedEnv({ PAIR_LOOP_HOME: home })
    expect(expectOk(await runCli(['status', '--all'], { cwd: repo, env })).runs).toEqual([])
    expectOk(await runCli(['codes'], { cwd: repo, env }))
    expectError(await runCli(['status'], { cwd: repo, env }), 'run_not_found')
  })
})

describe('filesystem: a write that fails half-way (disk full)', () => {
  it('leaves the old state, HANDOFF.md and no temp file when the state write fails with EFBIG (ulimit -f), and the same command then succeeds', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    const path = runStatePath(runId, sb.home)
    const stateBefore = readFileSync(path, 'utf8')
    const handoffBefore = readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')
    expect(stateBefore.length).toBeLessThan(8 * 1024)
    const body = join(tempDir('pl-body-'), 'body.txt')
    writeFileSync(body, `a long answer ${'z'.repeat(60 * 1024)}`)
    const args = ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', body]
    // 32 blocks = 16 kB: the old state fits, the new one (with a 60 kB reply) does not
    const failed = await cliWithFileLimit(args, 32, sb.repo, sb.env)
    // no death by SIGXFSZ: an io_error document, saying the old state is intact
    expect(failed.signal, failed.stderr).toBeNull()
    const error = expectError(failed, 'io_error')
    expect(error).toMatchObject({ errno: 'EFBIG', path })
    expect(error.message).toMatch(/previous state is intact/)
    expect(readFileSync(path, 'utf8')).toBe(stateBefore)
    expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toBe(handoffBefore)
    expect(readdirSync(runsDir(sb.home)).filter((name) => name.endsWith('.tmp') || name.endsWith('.lock'))).toEqual([])
    // room again: the same command goes through
    expectOk(await sb.cli(args))
    expect(sb.state(runId).replies['1.1']!.body).toMatch(/^a long answer z+$/)
  })

  it('leaves the old file and no temp file when the rename over it fails', () => {
    const dir = tempDir('pl-atomic-')
    const target = join(dir, 'state.json')
    mkdirSync(target) // a directory where the file should be: the rename must fail
    writeFileSync(join(target, 'keep'), 'old')
    expect(() => writeFileAtomic(target, '{"new":true}\n')).toThrow()
    expect(readFileSync(join(target, 'keep'), 'utf8')).toBe('old')
    expect(readdirSync(dir)).toEqual(['state.json'])
  })
})

describe('filesystem: symbolic links', () => {
  it('refuses a run file replaced by a symbolic link (state_malformed) and leaves its target untouched', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, reviewWith(1))
    const path = runStatePath(runId, sb.home)
    const target = join(tempDir('pl-elsewhere-'), 'victim.json')
    writeFileSync(target, readFileSync(path))
    const victim = readFileSync(target, 'utf8')
    rmSync(path)
    symlinkSync(target, path)
    for (const args of [
      ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'],
      ['status', '--run', runId],
      ['finish', '--verdict', 'ABANDONED', '--run', runId],
      ['coder-done', '--summary', 'x', '--run', runId],
    ]) {
      const error = expectError(await sb.cli(args, { input: 'answer' }), 'state_malformed')
      expect(error.message).toMatch(/symbolic link/)
    }
    expect(readFileSync(target, 'utf8')).toBe(victim)
    expect(lstatSync(path).isSymbolicLink()).toBe(true)
    expect(readlinkSync(path)).toBe(target)
  })

  // a planted link is not pair-loop's rendering: the transcript goes beside the run's state (issue 34), never through it
  it('never writes through a HANDOFF.md symbolic link planted in the repository', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const victim = join(tempDir('pl-victim-'), 'important.txt')
    writeFileSync(victim, 'do not overwrite\n')
    rmSync(join(sb.repo, 'HANDOFF.md'))
    symlinkSync(victim, join(sb.repo, 'HANDOFF.md'))
    expectOk(await sb.cli(['coder-done', '--summary', 'done']))
    expect(readFileSync(victim, 'utf8')).toBe('do not overwrite\n')
    expect(readFileSync(join(sb.home, 'runs', runId, 'HANDOFF.md'), 'utf8')).toBe(renderHandoff(sb.state(runId)))
  })
})

describe('filesystem: spaces and non-ASCII characters in paths', () => {
  it('runs a whole loop in "my repo/Проект ✓" with its home in "pl home ✓", HANDOFF.md landing there', async () => {
    const repo = makeRepo({ 'README.md': '# демо\n', 'src/файл ✓.ts': 'export const x = 1\n' }, 'my repo/Проект ✓')
    const env = isolatedEnv()
    env.PAIR_LOOP_HOME = join(tempDir('pl-'), 'pl home ✓')
    writeTestHomeConfig(env.PAIR_LOOP_HOME) // the person's config lives in their home: the new one needs it too
    const cli = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
      runCli(args, { cwd: options.cwd ?? repo, env: { ...env, ...options.env } })
    const started = expectOk(await cli(['start', '--task', 'trim the файл']))
    expect(started.handoff_path).toBe(join(repo, 'HANDOFF.md'))
    writeFiles(repo, { 'src/файл ✓.ts': 'export const x = 2\n', 'новый файл.md': 'new\n' })
    expect(
      expectOk(await cli(['coder-done', '--summary', 'changed x'], { cwd: join(repo, 'src') })).diff,
    ).toMatchObject({ files: 2 })
    const promptFile = join(tempDir('pl-prompt-'), 'prompt.txt')
    expect(expectOk(await cli(reviewArgs('approve'), { env: { STUB_PROMPT_FILE: promptFile } })).verdict).toBe(
      'APPROVED',
    )
    const prompt = readFileSync(promptFile, 'utf8')
    expect(prompt).toContain('файл ✓.ts')
    expect(prompt).toContain('новый файл.md')
    expect(prompt).not.toContain('HANDOFF.md |')
    const finished = expectOk(await cli(['finish', '--verdict', 'APPROVED']))
    expect(existsSync(finished.pr_body_path)).toBe(true)
    expect(readFileSync(finished.pr_body_path, 'utf8')).toContain('trim the файл')
    const state = JSON.parse(readFileSync(runStatePath(started.run_id, env.PAIR_LOOP_HOME), 'utf8'))
    expect(state).toMatchObject({ repo, phase: 'finished' })
    expect(readFileSync(join(repo, 'HANDOFF.md'), 'utf8')).toBe(renderHandoff(state))
    expect(git(repo, ['status', '--porcelain', '--untracked-files=all']).split('\n').filter(Boolean).sort()).toEqual(
      [
        '?? "\\320\\275\\320\\276\\320\\262\\321\\213\\320\\271 \\321\\204\\320\\260\\320\\271\\320\\273.md"',
        ' M "src/\\321\\204\\320\\260\\320\\271\\320\\273 \\342\\234\\223.ts"',
      ].sort(),
    )
  }, 60_000)
})
