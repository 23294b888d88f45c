// The test Context's spawn (lib/ground/context.ts): git started for an in-process command from a small dash process of
// the worker's, not from the worker itself. Node starts a program by forking the whole process: its page tables are
// copied and the copy torn down again in the child, so each start costs more the more the worker holds, and a vitest
// worker holds 100-200 MB of its own by the middle of a run (bench/fork.mjs).
// Only what it can do as node would is served: stdin ignored (a fed or given stdin is started as usual), the program
// found on the call's PATH, an existing directory, variable names the shell can export. The program runs in the
// call's directory with exactly the call's environment; its output goes to files in the run's temp folder (in memory)
// and is handed over when it ends, in 64 KiB chunks (so a reader sees none of it before: no test reads a program that
// never ends); kill() signals it. dash, not bash: bash's exec puts SHLVL into the program's environment. Without dash,
// and with PAIR_LOOP_TEST_SPAWN=node (to compare), everything is started as usual; bun's tests never use it (bun's
// spawn does not fork).
import { type ChildProcess, spawn as nodeSpawn, spawnSync, type SpawnOptions } from 'node:child_process'
import { EventEmitter } from 'node:events'
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'

/**
 * One call at a time: `<id>` on a line names a request, a script of the call (cd, environment, exec) that a forked
 * child sources; it answers `<id> <pid>` once the child runs and `<id> <pid> <status>` when it has ended.
 */
const SERVER = [
  'dir=$1',
  'while IFS= read -r id; do',
  '  { . "$dir/$id.req"; } </dev/null >"$dir/$id.out" 2>"$dir/$id.err" &',
  '  pid=$!',
  '  echo "$id $pid"',
  '  wait "$pid"',
  '  echo "$id $pid $?"',
  'done',
].join('\n')

const CHUNK = 64 * 1024

interface Server {
  child: ChildProcess
  /** The line handler of the call it serves now. */
  onLine: (line: string) => void
  serving: ServedChild | null
}

const idle: Server[] = []
let folder: string | undefined
let unusable = false
let calls = 0

/** node's spawn, or the same call served from a dash process when it can be (see the header). */
export function spawnViaServer(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const served = servable(command, args, options)
  return served ? serve(served, options) : nodeSpawn(command, args, options)
}

interface Call {
  cwd: string
  program: string
  args: readonly string[]
  env: [string, string][]
}

/** dash, where the worker's PATH finds it; null when it does not (or PAIR_LOOP_TEST_SPAWN=node): nothing is served. */
const DASH = process.env.PAIR_LOOP_TEST_SPAWN === 'node' ? null : onPath('dash', process.cwd(), process.env)

/** The spawn options execStream gives; a call with any other is started by node. */
const SERVED_OPTIONS = new Set(['cwd', 'env', 'stdio'])

function servable(command: string, args: readonly string[], options: SpawnOptions): Call | null {
  if (unusable || !DASH || !Array.isArray(options.stdio) || options.stdio[0] !== 'ignore') return null
  if (options.stdio[1] !== 'pipe' || options.stdio[2] !== 'pipe') return null
  if (Object.keys(options).some((key) => !SERVED_OPTIONS.has(key))) return null
  const cwd = typeof options.cwd === 'string' ? options.cwd : process.cwd()
  const given = options.env ?? process.env
  const env = Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined)
  if (!isDirectory(cwd) || env.some(([key]) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))) return null
  const program = onPath(command, cwd, given)
  if (!program || [cwd, ...args, ...env.flat()].some((text) => text.includes('\0'))) return null
  return { cwd, program, args, env }
}

/** The call as the script its child sources: nothing of the server's own environment reaches the program. */
function script({ cwd, program, args, env }: Call): string {
  const exported = env.length > 0 ? `export ${env.map(([key, value]) => quoted(`${key}=${value}`)).join(' ')}\n` : ''
  return `cd ${quoted(cwd)} || exit 126\nunset PATH PWD OLDPWD\n${exported}exec ${[program, ...args].map(quoted).join(' ')}\n`
}

const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The file execvp would run for `command` (the PATH of the call's environment); null when there is none. */
function onPath(command: string, cwd: string, env: NodeJS.ProcessEnv): string | null {
  if (command.includes('/')) return executable(resolve(cwd, command))
  for (const dir of (env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const found = executable(resolve(cwd, dir || '.', command))
    if (found) return found
  }
  return null
}

function executable(path: string): string | null {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile() && isAbsolute(path) ? path : null
  } catch {
    return null
  }
}

/** A ChildProcess as execStream uses one: stdout, stderr, pid, kill, and 'close' after both streams have ended. */
class ServedChild extends EventEmitter {
  pid: number | undefined = undefined
  readonly stdin = null
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  killed = false
  private signal: NodeJS.Signals | null = null
  private ended = false
  private closed = false

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.closed) return false
    this.signal = signal
    this.killed = true
    if (this.pid !== undefined && !this.ended) signalled(this.pid, signal)
    return true
  }

  started(pid: number): void {
    this.pid = pid
    if (this.signal) signalled(pid, this.signal)
  }

  async end(status: number, out: Buffer, err: Buffer): Promise<void> {
    this.ended = true
    await Promise.all([handOver(this.stdout, out), handOver(this.stderr, err)])
    // killed before its output was all read: ended by the signal, as node reports a reader that stops early
    const [code, signal] = this.signal ? [null, this.signal] : [status, null]
    this.closed = true
    this.emit('exit', code, signal)
    this.emit('close', code, signal)
  }
}

function signalled(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {} // already gone
}

/**
 * `data` into `stream` in pipe-sized chunks, then its end; resolved once read to the end, destroyed by its reader, or
 * (nobody reading it) all written: node's child closes then too, its unread output left in the stream.
 */
function handOver(stream: PassThrough, data: Buffer): Promise<void> {
  return new Promise((done) => {
    stream.on('error', () => {})
    if (stream.destroyed) return done()
    for (const event of ['end', 'close']) stream.once(event, () => done())
    if (stream.listenerCount('data') === 0 && !stream.readableFlowing) stream.once('finish', () => done())
    for (let at = 0; at < data.length; at += CHUNK) stream.write(data.subarray(at, at + CHUNK))
    stream.end()
  })
}

/** The worker's folder for requests, their output and the FIFOs, made on first use. */
function ownFolder(): string {
  if (folder === undefined) folder = mkdtempSync(join(tmpdir(), 'pl-spawn-server-'))
  return folder
}

/**
 * A request, its script written: its id (the line a server reads) and the path its files share; null when that cannot
 * be (the folder removed under it: none is served after).
 */
function request(call: Call): { id: string; base: string } | null {
  const id = `${process.pid}-${++calls}`
  const base = join(ownFolder(), id)
  try {
    writeFileSync(`${base}.req`, script(call))
    return { id, base }
  } catch {
    unusable = true
    return null
  }
}

/** A request's output, its files removed. */
function answer(base: string): [Buffer, Buffer] {
  const [out, err] = [readFileSync(`${base}.out`), readFileSync(`${base}.err`)]
  for (const suffix of ['req', 'out', 'err']) rmSync(`${base}.${suffix}`, { force: true })
  return [out, err]
}

function serve(call: Call, options: SpawnOptions): ChildProcess {
  const asked = request(call)
  if (!asked) return nodeSpawn(call.program, call.args, options)
  const { id, base } = asked
  const server = idle.pop() ?? startServer()
  const child = new ServedChild()
  server.serving = child
  serverRef(server, true)
  server.onLine = (line) => {
    const [, pid, status] = line.split(' ')
    if (status === undefined) return child.started(Number(pid))
    const [out, err] = answer(base)
    serverRef(server, false)
    server.serving = null
    idle.push(server)
    void child.end(Number(status), out, err)
  }
  server.child.stdin!.write(`${id}\n`)
  return child as unknown as ChildProcess
}

/** A server keeps the worker alive only while it serves a call (an idle one never holds a finished worker open). */
function serverRef(server: Server, busy: boolean): void {
  const handles = [server.child, server.child.stdin, server.child.stdout] as unknown as {
    ref?(): void
    unref?(): void
  }[]
  for (const handle of handles) busy ? handle.ref?.() : handle.unref?.() // bun's pipes have neither
}

/** A dash running `commands` over the worker's folder, with only a PATH of its own (unset in each child it forks). */
function startDash(commands: string, stdio: SpawnOptions['stdio']): ChildProcess {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  return nodeSpawn(DASH!, ['-c', commands, 'spawn-server', ownFolder()], { stdio, env })
}

function startServer(): Server {
  const child = startDash(SERVER, ['pipe', 'pipe', 'inherit'])
  const server: Server = { child, onLine: () => {}, serving: null }
  let carry = ''
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    const lines = (carry + text).split('\n')
    carry = lines.pop()!
    for (const line of lines) server.onLine(line)
  })
  // a server that ends (killed from outside) ends its call as a killed program, and no call goes to it again
  child.on('close', () => {
    unusable = true
    void server.serving?.end(128 + 9, Buffer.alloc(0), Buffer.from('the spawn server ended\n'))
  })
  child.stdin!.on('error', () => {})
  return server
}

/**
 * The test's own git calls are synchronous (spawnSync): they go to a server of their own that reads its requests from
 * one FIFO and answers on another, read here with a blocking read. Both are opened read-write, so neither open waits
 * for the other side; the worker's end closing at its exit ends the server.
 */
let channel: { requests: number; answers: number } | null | undefined // null: it could not be opened

export interface SyncResult {
  status: number
  stdout: Buffer
  stderr: Buffer
}

/** `command` run to its end as spawnSync would, through the synchronous server; null when it cannot be served. */
export function runViaServer(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): SyncResult | null {
  const call = servable(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  const ends = call && (channel === undefined ? openChannel() : channel)
  const asked = ends && request(call)
  if (!ends || !asked) return null
  writeSync(ends.requests, `${asked.id}\n`)
  let said = ''
  const buffer = Buffer.alloc(256)
  // `<id> <pid>`, then `<id> <pid> <status>`: the call has ended at the second line
  while (said.split('\n').length < 3) said += buffer.toString('utf8', 0, readSync(ends.answers, buffer))
  const [out, err] = answer(asked.base)
  return { status: Number(said.split('\n')[1]!.split(' ')[2]), stdout: out, stderr: err }
}

function openChannel(): { requests: number; answers: number } | null {
  const [requests, answers] = [join(ownFolder(), 'requests'), join(ownFolder(), 'answers')]
  if (spawnSync('mkfifo', [requests, answers]).status !== 0) {
    channel = null
    return null
  }
  const ends = { requests: openSync(requests, 'r+'), answers: openSync(answers, 'r+') }
  const child = startDash(`exec <"$1/requests" >"$1/answers"\n${SERVER}`, 'ignore')
  child.unref()
  child.on('error', () => {
    closeSync(ends.requests)
    channel = null
  })
  channel = ends
  return ends
}
