// Shared by the reliability tests: a seeded random source, the CLI as a killable process, a lock holder,
// and "which processes are still in this process group".
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { CLI_COMMAND, ROOT, type CliResult } from '../_helpers.ts'

/** The seed of a test file's random choices: RELIABILITY_SEED, else a fresh one that the test prints so a failure can be replayed. */
export function seedFor(label: string): number {
  const fromEnv = Number(process.env.RELIABILITY_SEED)
  const seed = Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Math.floor(Math.random() * 0x7fffffff) + 1
  process.stderr.write(`[reliability/${label}] seed ${seed} (replay with RELIABILITY_SEED=${seed})\n`)
  return seed
}

/** mulberry32: small, fast, good enough to pick delays and cases. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Spawned {
  child: ChildProcess
  done: Promise<CliResult & { signal: NodeJS.Signals | null }>
}

/** The CLI as a process we can kill: like runCli, but the caller gets the child. */
export function spawnCli(
  args: string[],
  { cwd, env, input }: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer },
): Spawned {
  const [command, ...prefix] = CLI_COMMAND
  const child = spawn(command!, [...prefix, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
  child.stdin!.on('error', () => {})
  child.stdin!.end(input ?? '')
  const done = new Promise<CliResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString('utf8'), json })
    })
  })
  return { child, done }
}

/**
 * Another process holding `path`'s lock with pair-loop's own settings (proper-lockfile, realpath off, stale 10 s),
 * refreshing it as a live holder does, until it is killed. Resolves once the lock is held.
 */
export async function holdLock(path: string): Promise<ChildProcess> {
  const code = `
    const lockfile = require('proper-lockfile')
    lockfile.lock(${JSON.stringify(path)}, { realpath: false, stale: 10000, onCompromised: () => {} })
      .then(() => { process.stdout.write('locked\\n'); setInterval(() => {}, 1000) }, (e) => { console.error(e); process.exit(9) })
  `
  const child = spawn(process.execPath, ['-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve()
    })
    child.on('exit', (status) => reject(new Error(`lock holder exited early (${status})`)))
  })
  return child
}

/** Processes (not zombies) whose process group is `pgid`: what a reviewer left behind. Linux /proc only. */
export function liveInGroup(pgid: number): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[0] is the state, fields[2] the process group
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) found.push(Number(name))
  }
  return found
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
