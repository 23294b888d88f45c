// What the files that install the package share within one test run (test/pack.test.ts, test/readme-person.test.ts):
// this clone's `npm pack` tarball and npm's cache folder. Each is made once per run by whichever file asks first, in
// a folder of its own under the run's temp folder (test/_global-setup.ts), which goes with that folder at the end of
// the run; a file that asks while another is making it waits for it. Under vitest the files run in parallel workers,
// one run folder for all of them; under `bun test --isolate` each file has a run folder of its own, so each makes its
// own. Outside a run folder (a file run without the global setup) a file makes its own in its temp folder.
// - claimed: `mkdir` of the item's folder, which one process wins; the winner writes `owner` (its pid), then
//   `result.json` (or `failed.json`) by rename, so a reader sees all of it or none.
// - the tarball is checked when read: its sha256 against the one recorded when it was packed, and its file list read
//   from the tarball itself, so a test asserts on what the tarball holds.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, delimiter, join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { isProcessAlive } from '../lib/ground/processes.ts'
import { ROOT, type ProcessResult, runProcess, tempDir } from './_helpers.ts'

/** The README's step that packs the clone, run as written (configured through the environment only). */
export const PACK_COMMAND = 'npm pack'
const WAIT_MS = 300_000

export interface Packed {
  /** The tarball, in the run's shared folder: read or copy it, never change it. */
  tarball: string
  /** The file name `npm pack` printed. */
  filename: string
  /** The files the tarball holds, read from it, without npm's `package/` prefix. */
  files: string[]
}

/**
 * The environment of a user's shell, `extra` added: no npm_* variables from an enclosing `npm test`, and no project
 * node_modules/.bin on PATH.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env))
    if (!/^(?:npm_|PAIR_LOOP_|CLAUDE_|CODEX_)/i.test(key) && value !== undefined) env[key] = value
  env.PATH = (process.env.PATH ?? '/usr/bin:/bin')
    .split(delimiter)
    .filter((dir) => !dir.startsWith(join(ROOT, 'node_modules')))
    .join(delimiter)
  return {
    ...env,
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  }
}

const show = (result: ProcessResult) =>
  `exit ${result.code}\nstdout: ${result.stdout.slice(0, 4000)}\nstderr: ${result.stderr.slice(0, 4000)}`

/** npm's cache folder as the user's npm has it (`npm config get cache`), '' if npm names none. */
export async function npmCache(): Promise<string> {
  return (
    await once('npm-cache', async () => {
      const config = await runProcess(['npm', 'config', 'get', 'cache'], { cwd: ROOT, env: userEnv() })
      return { cache: config.code === 0 ? config.stdout.trim() : '' }
    })
  ).record.cache
}

/**
 * The clone packed by the README's `npm pack` (in the clone, scripts not run: `prepare` would rebuild dist/ under the
 * feet of the tests beside this one; the caller has made sure dist/ is fresh), once per run.
 */
export async function packedClone(): Promise<Packed> {
  const { dir, record } = await once('npm-pack', async (dir) => {
    const pack = await runProcess(PACK_COMMAND.split(' '), {
      cwd: ROOT,
      env: userEnv({ npm_config_pack_destination: dir, npm_config_ignore_scripts: 'true' }),
      timeoutMs: 240_000,
    })
    const filename = pack.stdout.trim().split('\n').at(-1)?.trim() ?? ''
    if (pack.code !== 0 || !filename || !existsSync(join(dir, filename)))
      throw new Error(`${PACK_COMMAND} failed: ${show(pack)}`)
    return { filename, sha256: sha256(join(dir, filename)) }
  })
  const tarball = join(dir, record.filename)
  const bytes = readFileSync(tarball)
  if (sha256(bytes) !== record.sha256) throw new Error(`${tarball} is not the tarball npm pack wrote: it has changed`)
  return { tarball, filename: record.filename, files: tarFiles(bytes) }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256')
    .update(typeof data === 'string' ? readFileSync(data) : data)
    .digest('hex')
}

/** The regular files of a .tgz, in order, with npm's `package/` prefix taken off (ustar, pax and GNU long names). */
export function tarFiles(tgz: Buffer): string[] {
  const tar = gunzipSync(tgz)
  const files: string[] = []
  let longName: string | undefined
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512)
    if (header.every((byte) => byte === 0)) break
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0[\s\S]*$/, '')
    const size = Number.parseInt(field(124, 12).trim() || '0', 8)
    const type = field(156, 1) || '0'
    const body = tar.subarray(at + 512, at + 512 + size)
    const prefix = field(257, 5) === 'ustar' ? field(345, 155) : ''
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100))
    longName = undefined
    if (type === 'x') longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1]
    else if (type === 'L') longName = body.toString('utf8').replace(/\0[\s\S]*$/, '')
    else if (type === '0') {
      if (!name.startsWith('package/')) throw new Error(`${name} in the tarball is outside package/`)
      files.push(name.slice('package/'.length))
    }
    at += 512 + Math.ceil(size / 512) * 512
  }
  return files
}

/** Per process: what this process made or waited for, by run folder and name, with the folder it is in. */
const made = new Map<string, { dir: string; item: Promise<{ dir: string; record: unknown }> }>()

/** `make(dir)`'s JSON record, made once per run folder by the first process to claim `name`'s folder. */
function once<T>(name: string, make: (dir: string) => Promise<T>): Promise<{ dir: string; record: T }> {
  const run = tmpdir()
  const key = `${run}\0${name}`
  const known = made.get(key)
  if (known !== undefined && existsSync(known.dir)) return known.item as Promise<{ dir: string; record: T }>
  const shared = basename(run).startsWith('pair-loop-test-run-')
  const dir = join(shared ? run : tempDir('pl-shared-'), `pair-loop-shared-${name}`)
  const item = claimOrWait(dir, make)
  made.set(key, { dir, item })
  return item
}

async function claimOrWait<T>(dir: string, make: (dir: string) => Promise<T>): Promise<{ dir: string; record: T }> {
  try {
    mkdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return { dir, record: await waitFor<T>(dir) }
  }
  writeFileSync(join(dir, 'owner'), String(process.pid))
  try {
    const record = await make(dir)
    writeWhole(join(dir, 'result.json'), JSON.stringify(record))
    return { dir, record }
  } catch (error) {
    writeWhole(join(dir, 'failed.json'), JSON.stringify({ message: (error as Error).message }))
    throw error
  }
}

function writeWhole(path: string, text: string): void {
  writeFileSync(`${path}.${process.pid}.tmp`, text)
  renameSync(`${path}.${process.pid}.tmp`, path)
}

/** The record another process is making in `dir`: its failure thrown here too, its death or a time limit an error. */
async function waitFor<T>(dir: string): Promise<T> {
  const until = Date.now() + WAIT_MS
  for (;;) {
    if (existsSync(join(dir, 'result.json'))) return JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as T
    if (existsSync(join(dir, 'failed.json'))) {
      const { message } = JSON.parse(readFileSync(join(dir, 'failed.json'), 'utf8')) as { message: string }
      throw new Error(`${dir} failed in the test file that made it: ${message}`)
    }
    const owner = existsSync(join(dir, 'owner')) ? Number(readFileSync(join(dir, 'owner'), 'utf8')) : 0
    if (owner > 0 && !isProcessAlive(owner) && !existsSync(join(dir, 'result.json')))
      throw new Error(`${dir}: process ${owner}, which was making it, ended without a result`)
    if (Date.now() > until) throw new Error(`${dir}: no result after ${WAIT_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
