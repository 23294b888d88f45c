// A path's lock (proper-lockfile): a bounded wait, then `locked`; stale locks of killed processes reclaimed.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { context, nowIso } from './context.ts'
import { fail, interruptedError } from './errors.ts'
import { ioFailure } from './fsutil.ts'
import { settings } from './settings.ts'

const STALE_MS = 10_000

/** Node ignores SIGXFSZ so that a write past `ulimit -f` fails with EFBIG; signal-exit (under proper-lockfile) would
 * turn it into a death by signal with the lock's cleanup. A listener of our own keeps it an error. */
let keepSigxfszIgnored = () => {
  keepSigxfszIgnored = () => {}
  if (process.platform === 'win32') return
  try {
    process.on('SIGXFSZ', () => {})
  } catch {}
}

/** Hold a path's lock while `work` runs; a lock still held after the bounded wait is `locked` (75). */
export async function withLock<T>(path: string, work: () => T | Promise<T>): Promise<T> {
  keepSigxfszIgnored()
  let compromised: Error | undefined
  // how long a command waits for a run's lock before giving up with `locked` (PAIR_LOOP_LOCK_WAIT_MS for tests)
  const release = await acquire(path, settings().lockWaitMs, (error) => {
    compromised = error
  })
  noteHolder(path)
  try {
    const result = await work()
    if (compromised)
      fail('locked', `lost the lock on ${path} while writing (${compromised.message}); re-run the command`, { path })
    return result
  } finally {
    rmSync(holderPath(path), { force: true })
    await release().catch(() => {})
  }
}

/** Who holds a lock, beside it (proper-lockfile's lock folder must stay empty): so `locked` can name the holder. */
const holderPath = (path: string) => `${path}.lock-holder`

interface Holder {
  pid: number
  host: string
  since: string
}

function noteHolder(path: string): void {
  const { pid, host } = context()
  try {
    writeFileSync(holderPath(path), JSON.stringify({ pid, host, since: nowIso() } satisfies Holder))
  } catch {} // naming the holder is a courtesy; the lock itself holds without it
}

/** The holder as it noted itself, or nulls (a holder that did not say, or has just let go). */
function holderOf(path: string): { pid: number | null; host: string | null; since: string | null } {
  try {
    const held = JSON.parse(readFileSync(holderPath(path), 'utf8')) as Partial<Holder>
    return {
      pid: typeof held.pid === 'number' ? held.pid : null,
      host: typeof held.host === 'string' ? held.host : null,
      since: typeof held.since === 'string' ? held.since : null,
    }
  } catch {
    return { pid: null, host: null, since: null }
  }
}

/**
 * The lock, tried again every 25-75 ms (jittered, so contenders do not retry in step) until `waitMs` has passed, then
 * `locked` with the time really waited: a count of retries at random intervals waited a quarter less than it said.
 */
async function acquire(
  path: string,
  waitMs: number,
  onCompromised: (error: Error) => void,
): Promise<() => Promise<void>> {
  const lockfile = (await import('proper-lockfile')).default
  const startedAt = context().now()
  const signal = context().io.signal
  for (;;) {
    try {
      return await lockfile.lock(path, { realpath: false, stale: STALE_MS, onCompromised })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') ioFailure(`${path}.lock`, error)
    }
    // a signal ends a wait on a lock held elsewhere at once (a free lock is still taken, so a record can be made)
    if (signal?.aborted) throw interruptedError(signal)
    const waited = context().now() - startedAt
    if (waited >= waitMs) {
      const holder = holderOf(path)
      const who = holder.pid === null ? 'another pair-loop command' : `pid ${holder.pid} on ${holder.host}`
      fail('locked', `${path} is still locked by ${who} after ${waited} ms; try again`, {
        path,
        waited_ms: waited,
        ...holder,
      })
    }
    await pause(Math.min(25 + Math.random() * 50, waitMs - waited), signal)
  }
}

/** `ms` of sleep, cut short by the signal. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
  })
}

/**
 * Load the lock's code at the next turn of the event loop, so that a process about to take its first lock does it
 * while it waits on something else (a git child, a pipe) rather than on the way to the lock.
 */
export function preloadLock(): void {
  setImmediate(() => void import('proper-lockfile').catch(() => {}))
}
