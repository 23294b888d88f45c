// A path's lock (proper-lockfile): a bounded wait, then `locked`; stale locks of killed processes reclaimed.
import { fail } from './errors.ts'
import { ioFailure } from './fsutil.ts'

const STALE_MS = 10_000

/** How long a command waits for a run's lock before giving up with `locked` (env override for tests). */
function lockWaitMs(): number {
  const fromEnv = Number(process.env.PAIR_LOOP_LOCK_WAIT_MS)
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 15_000
}

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
  const lockfile = (await import('proper-lockfile')).default
  keepSigxfszIgnored()
  let compromised: Error | undefined
  const waitMs = lockWaitMs()
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(path, {
      realpath: false,
      stale: STALE_MS,
      retries: { retries: Math.ceil(waitMs / 50), factor: 1, minTimeout: 25, maxTimeout: 75, randomize: true },
      onCompromised: (error) => {
        compromised = error
      },
    })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      fail('locked', `${path} is still locked by another pair-loop command after ${waitMs} ms; try again`, {
        path,
        waited_ms: waitMs,
      })
    }
    ioFailure(`${path}.lock`, error)
  }
  try {
    const result = await work()
    if (compromised)
      fail('locked', `lost the lock on ${path} while writing (${compromised.message}); re-run the command`, { path })
    return result
  } finally {
    await release().catch(() => {})
  }
}
