// The test Context's spawn (test/_spawn-server.ts) must be node's spawn from the outside: for each call below the
// served program and the one node starts give the same bytes, exit code, signal and environment. Node's own spawn is
// the oracle; what cannot be served as node would (stdin given, a directory or program that is not there) is handed
// to node's spawn itself.
import { ChildProcess, type SpawnOptions, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { git, makeRepo, tempDir } from './_helpers.ts'
import { runViaServer, spawnViaServer } from './_spawn-server.ts'

interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: Buffer
  stderr: string
  chunks: number
}

type Start = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess

/** A program started as execStream starts one, read to its end. */
function ended(start: Start, command: string, args: string[], options: Omit<SpawnOptions, 'stdio'>) {
  return new Promise<Ended>((done, failed) => {
    const child = start(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
    child.on('error', failed)
    child.on('close', (code, signal) =>
      done({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), chunks: out.length }),
    )
  })
}

const listed = (printed: Buffer) => printed.toString().split('\0').sort().join('\0')

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, ...extra })

describe('a served program is the program node starts', () => {
  const repo = makeRepo({ 'README.md': '# demo\n', 'odd\nname é.txt': 'x\n' })
  const cases: [string, string, string[], NodeJS.ProcessEnv][] = [
    ['git prints the same top level', 'git', ['rev-parse', '--show-toplevel'], env()],
    ['git lists NUL-separated names holding a newline and a non-ASCII letter', 'git', ['ls-files', '-z'], env()],
    ['git fails with the same code and words', 'git', ['rev-parse', '--verify', 'no-such-rev'], env()],
    [
      'the program sees exactly the environment given, nothing of the server',
      'env',
      ['-0'],
      env({ A: 'x y', B: "it's" }),
    ],
    ['arguments reach it whole: quotes, newlines, an empty one', 'printf', ['%s|', "a'b", 'c\nd', '', '$HOME'], env()],
    ['it runs in the directory given', 'pwd', [], env()],
    ['an exit code above 128 is a code, not a signal', 'sh', ['-c', 'exit 129'], env()],
    ['a megabyte of output arrives whole, in pipe-sized chunks', 'head', ['-c', '1048576', '/dev/zero'], env()],
  ]
  it.each(cases)('%s', async (_, command, args, given) => {
    const options = { cwd: repo, env: given }
    const [served, started] = [
      await ended(spawnViaServer, command, args, options),
      await ended(spawn, command, args, options),
    ]
    // the same variables; the shell lists them in an order of its own, which no program reads
    if (command === 'env') for (const end of [served, started]) end.stdout = Buffer.from(listed(end.stdout))
    expect(served.stdout.equals(started.stdout)).toBe(true)
    expect({ ...served, stdout: null, chunks: null }).toEqual({ ...started, stdout: null, chunks: null })
    if (served.stdout.length > 64 * 1024) expect(served.chunks).toBeGreaterThan(1)
  })
})

describe('a served program stops as node stops one', () => {
  it('killed, it ends by the signal, promptly', async () => {
    const child = spawnViaServer('sleep', ['30'], { cwd: tempDir(), env: env(), stdio: ['ignore', 'pipe', 'pipe'] })
    const closed = new Promise((done) => child.on('close', (code, signal) => done({ code, signal })))
    await new Promise((done) => setTimeout(done, 100))
    const started = Date.now()
    expect(child.kill('SIGKILL')).toBe(true)
    expect(await closed).toEqual({ code: null, signal: 'SIGKILL' })
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  // (node's own answer races here: the program may die of the closed pipe first, and exit 1)
  it('a reader that stops at the first chunk and kills it gets no more data, and sees it end by the signal', async () => {
    const child = spawnViaServer('head', ['-c', '1048576', '/dev/zero'], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let chunks = 0
    child.stdout!.on('data', () => {
      chunks++
      child.stdout!.destroy()
      child.kill('SIGKILL')
    })
    child.stderr!.on('data', () => {})
    expect(await new Promise((done) => child.on('close', (code, signal) => done({ code, signal })))).toEqual({
      code: null,
      signal: 'SIGKILL',
    })
    expect(chunks).toBe(1)
  })
})

describe('what cannot be served is started by node itself', () => {
  it.each<[string, string, SpawnOptions]>([
    ['a stdin to write to', 'cat', { env: env(), stdio: ['pipe', 'pipe', 'pipe'] }],
    ['a directory that is not there', 'pwd', { cwd: '/no/such/dir', env: env(), stdio: ['ignore', 'pipe', 'pipe'] }],
    ['a program no PATH entry holds', 'no-such-program-here', { env: env(), stdio: ['ignore', 'pipe', 'pipe'] }],
    ['a variable name the shell cannot export', 'env', { env: env({ 'A-B': '1' }), stdio: ['ignore', 'pipe', 'pipe'] }],
  ])('%s', async (_, command, options) => {
    const child = spawnViaServer(command, [], options)
    expect(child).toBeInstanceOf(ChildProcess)
    child.on('error', () => {})
    child.stdin?.end()
    await new Promise((done) => child.on('close', done))
  })
})

describe("the tests' own synchronous git calls", () => {
  it.each<[string, string[]]>([
    ['a commit made and read back', ['log', '--format=%s']],
    ['a failure with its code and words', ['rev-parse', '--verify', 'no-such-rev']],
  ])('%s: the same as spawnSync', (_, args) => {
    const repo = makeRepo()
    mkdirSync(join(repo, 'sub'))
    writeFileSync(join(repo, 'sub', 'f.txt'), 'f\n')
    git(repo, ['add', '-A'])
    git(repo, ['commit', '-qm', 'second'])
    const served = runViaServer('git', args, { cwd: repo, env: env() })
    const started = spawnSync('git', args, { cwd: repo, env: env() })
    expect(served).not.toBeNull()
    expect(served!.stdout.equals(started.stdout)).toBe(true)
    expect({ status: served!.status, stderr: served!.stderr.toString() }).toEqual({
      status: started.status,
      stderr: started.stderr.toString(),
    })
  })
})
