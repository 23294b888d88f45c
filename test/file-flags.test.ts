// pair-loop's files are its own (DESIGN.md, Authority): every flag that names a file is lstat'ed first (a FIFO, a
// device or a folder is `usage` naming the flag and the path, never opened: a FIFO would block the command), and no
// output flag writes inside $PAIR_LOOP_HOME, directly or through a symlink. On 42ee5a2 `report --out
// $PAIR_LOOP_HOME/runs/<id>.json` overwrote the run's state with HTML, `--snapshot-in FIFO` blocked and `--snapshot-out
// DIR` answered internal.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runStatePath } from '../lib/ground/paths.ts'
import { expectError, expectOk, reviewWith, runInReview, startRun, writeChange } from './_expect.ts'
import { recordReview, sandbox, tempDir, type CliResult } from './_helpers.ts'
import { BOT, comment, prSandbox, thread, world } from './_pr.ts'

interface Place {
  home: string
  statePath: string
  cli: (args: string[]) => Promise<CliResult>
  cliProcess: (args: string[]) => Promise<CliResult>
}

/** Each file flag: a run in the phase where the command reads (or writes) the file, and its command line for a path. */
const FLAGS: Array<{ flag: string; output: boolean; ready: () => Promise<Place>; argv: (path: string) => string[] }> = [
  {
    flag: '--summary-file',
    output: false,
    ready: async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      writeChange(sb)
      return { ...sb, statePath: runStatePath(runId, sb.home) }
    },
    argv: (path) => ['coder-done', '--summary-file', path],
  },
  {
    flag: '--body-file',
    output: false,
    ready: async () => {
      const sb = sandbox()
      const runId = await runInReview(sb)
      await recordReview(sb.home, runId, reviewWith(1))
      return { ...sb, statePath: runStatePath(runId, sb.home) }
    },
    argv: (path) => ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', path],
  },
  {
    flag: '--body-file',
    output: false,
    ready: async () => {
      const sb = await prSandbox(world({ threads: [thread('PRRT_bot', [comment(11, BOT, 'off by one')])] }))
      expectOk(await sb.cli(['pr-check']))
      return { ...sb, statePath: runStatePath(sb.runId, sb.home) }
    },
    argv: (path) => ['pr-reply', '--thread', 'PRRT_bot', '--body-file', path],
  },
  ...(['--snapshot-in', '--snapshot-out'] as const).map((flag) => ({
    flag,
    output: flag === '--snapshot-out',
    ready: async () => {
      const sb = await prSandbox()
      return { ...sb, statePath: runStatePath(sb.runId, sb.home) }
    },
    argv: (path: string) => ['pr-check', flag, path],
  })),
  {
    flag: '--out',
    output: true,
    ready: async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      return { ...sb, statePath: runStatePath(runId, sb.home) }
    },
    argv: (path) => ['report', '--out', path],
  },
]

const commandOf = (entry: (typeof FLAGS)[number]) => `${entry.argv('F')[0]} ${entry.flag}`

describe.each(FLAGS.map((entry) => [commandOf(entry), entry] as const))('%s', (_name, entry) => {
  it.each([
    ['a FIFO', () => fifo()],
    ['a folder', () => tempDir('pl-dir-')],
    ['a device', () => device()],
  ])('refuses %s as usage naming the flag and the path, without opening it', async (kind, make) => {
    const place = await entry.ready()
    const before = readFileSync(place.statePath, 'utf8')
    const path = make()
    // a process of its own: a FIFO opened would block it, and the test's time limit would end it
    const error = expectError(await place.cliProcess(entry.argv(path)), 'usage')
    expect(error).toMatchObject({ flag: entry.flag, file: path })
    expect(error.message).toContain(kind === 'a FIFO' ? 'FIFO' : kind === 'a folder' ? 'folder' : 'device')
    expect(readFileSync(place.statePath, 'utf8')).toBe(before)
  })

  it.each([
    ["the run's state file, inside PAIR_LOOP_HOME", (place: Place) => place.statePath],
    ["a symlink to the run's state file", (place: Place) => linkTo(place.statePath)],
  ])(
    entry.output
      ? 'refuses %s as usage, and the state is untouched'
      : 'reads %s as any file, and the state is untouched',
    async (_kind, pathOf) => {
      const place = await entry.ready()
      const before = readFileSync(place.statePath, 'utf8')
      const path = pathOf(place)
      const result = await place.cli(entry.argv(path))
      if (entry.output) expect(expectError(result, 'usage')).toMatchObject({ flag: entry.flag, file: path })
      else expect(result.stdout).not.toContain('inside PAIR_LOOP_HOME')
      if (entry.output || entry.flag === '--snapshot-in') expect(readFileSync(place.statePath, 'utf8')).toBe(before)
    },
  )
})

/**
 * A character device of the test's own (the null device's numbers) where the test may make one (root, as in CI): an
 * output written to it by rename, as a regression would, replaces this node, never the machine's /dev/null (as root it
 * did, once, and every git call on the machine failed). Elsewhere /dev/null, which an ordinary user cannot replace.
 */
function device(): string {
  const path = join(tempDir('pl-dev-'), 'null')
  return spawnSync('mknod', ['-m', '666', path, 'c', '1', '3']).status === 0 ? path : '/dev/null'
}

function fifo(): string {
  const path = join(tempDir('pl-fifo-'), 'pipe')
  expect(spawnSync('mkfifo', [path]).status).toBe(0)
  return path
}

function linkTo(target: string): string {
  const dir = join(tempDir('pl-link-'), 'out')
  mkdirSync(dir)
  const link = join(dir, 'link.json')
  symlinkSync(target, link)
  return link
}

describe('pr-check --snapshot-in', () => {
  it('keeps nothing of a replayed success on a run that escalated (the file is the coder’s to write)', async () => {
    const sb = await prSandbox(world({ pr: { ...world().pr, mergeable: 'CONFLICTING' } }))
    expect(expectOk(await sb.cli(['pr-check'])).decision).toBe('escalate')
    const before = sb.state(sb.runId)
    const green = join(tempDir('pl-snap-'), 'green.json')
    const { page_size: _p, checks: _c, ...data } = world()
    const snapshot = { version: 1, ...data, checks: [{ name: 'ci', status: 'pass', url: null }] }
    writeFileSync(green, JSON.stringify(snapshot))
    expect(expectOk(await sb.cli(['pr-check', '--snapshot-in', green]))).toMatchObject({ dry_run: true })
    expect(sb.state(sb.runId)).toEqual(before)
    expect(sb.state(sb.runId).pr_watch?.decision).toBe('escalate')
  })
})
