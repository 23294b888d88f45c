// Assertions shared by the CLI tests: the one-document output contract, and "nothing changed on disk".
import { appendFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { ERROR_CODES, type ErrorCode, PairLoopError } from '../lib/ground/errors.ts'
import { type CliResult, git, type sandbox } from './_helpers.ts'

export type Sandbox = ReturnType<typeof sandbox>

/** Exit 0 and exactly one JSON document (one line) on stdout, carrying `version: 1`. */
/** The PairLoopError `work` throws (any other error is thrown on); a failure of the test when it throws none. */
export function thrown(
  work: () => unknown,
  accepted = 'expected a PairLoopError, and nothing was thrown',
): PairLoopError {
  try {
    work()
  } catch (error) {
    if (error instanceof PairLoopError) return error
    throw error
  }
  throw new Error(accepted)
}

export function expectOk(result: CliResult): any {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
  expect(result.stdout.split('\n').length, 'stdout is one line').toBe(2)
  expect(result.json?.version).toBe(1)
  return result.json
}

/**
 * The error contract: the code's own exit status, exactly one JSON document on stdout with one error,
 * and exactly one line on stderr naming the code. Returns the error object (code, message, details).
 */
export function expectError(result: CliResult, code: ErrorCode): any {
  const seen = { exit: result.code, code: result.json?.errors?.[0]?.code }
  expect(seen, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toEqual({ exit: ERROR_CODES[code].exit, code })
  expect(
    result.stdout.endsWith('\n') && result.stdout.indexOf('\n') === result.stdout.length - 1,
    `one line on stdout: ${result.stdout}`,
  ).toBe(true)
  expect(result.json.version).toBe(1)
  expect(result.json.errors).toHaveLength(1)
  expect(typeof result.json.errors[0].message).toBe('string')
  expect(
    result.stderr.endsWith('\n') && result.stderr.indexOf('\n') === result.stderr.length - 1,
    `one line on stderr: ${result.stderr}`,
  ).toBe(true)
  expect(result.stderr).toContain(code)
  return result.json.errors[0]
}

/** Every file under a directory (and any extra files) with its bytes, to compare before/after a command. */
export function diskSnapshot(dirs: string[], files: string[] = []): Record<string, string | null> {
  const snapshot: Record<string, string | null> = {}
  const walk = (dir: string) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else snapshot[path] = readFileSync(path).toString('base64')
    }
  }
  for (const dir of dirs) walk(dir)
  for (const file of files) snapshot[file] = existsSync(file) ? readFileSync(file).toString('base64') : null
  return snapshot
}

/** The run's home (state, artifacts; not cache/ or store/, which only speed reads up) and the repository's HANDOFF.md and exclude file. */
export const runDisk = (sb: Sandbox) => {
  const snapshot = diskSnapshot([sb.home], [join(sb.repo, 'HANDOFF.md'), join(sb.repo, '.git', 'info', 'exclude')])
  return Object.fromEntries(
    Object.entries(snapshot).filter(
      ([path]) => !path.startsWith(join(sb.home, 'cache')) && !path.startsWith(join(sb.home, 'store')),
    ),
  )
}

/**
 * A small change against the base, committed (the tree stays clean, so a second `start` still sees no dirty tree):
 * `coder-done` refuses to hand over a tree that is the same as the base.
 */
export function writeChange(sb: Sandbox, name = 'change.txt', text = 'a small change\n'): void {
  appendFileSync(join(sb.repo, name), text) // appended: a second call (a second run) is a change again
  git(sb.repo, ['add', '--', name])
  git(sb.repo, ['commit', '-q', '-m', `a small change: ${name}`])
}

/** A run started by `start` itself, with a small change committed on its branch (`change.txt`), ready for `coder-done`. */
export async function startRun(sb: Sandbox, extra: string[] = []): Promise<string> {
  const runId = expectOk(await sb.cli(['start', '--task', 'demo task', ...extra])).run_id as string
  writeChange(sb)
  return runId
}

/** A run whose coder round 1 is done (phase reviewing). */
export async function runInReview(sb: Sandbox, extra: string[] = []): Promise<string> {
  const runId = await startRun(sb, extra)
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  return runId
}

export const reviewWith = (findings: number, verdict: 'APPROVED' | 'CHANGES_REQUESTED' = 'CHANGES_REQUESTED') =>
  [
    ...Array.from(
      { length: findings },
      (_, i) => `${i + 1}. [bug/minor] src/f${i + 1}.ts:${i + 1} — problem number ${i + 1}`,
    ),
    `VERDICT: ${verdict}`,
  ].join('\n')
