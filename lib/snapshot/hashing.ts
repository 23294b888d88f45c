// The paths a snapshot must look at, looked at (look.ts): on this thread when they are few, or spread over this thread
// and hashing threads (hash-worker.ts, one fewer than the cores) when there are many, as on a first snapshot, where
// reading and hashing are most of the time.
// A thread that cannot start or dies leaves its paths to this thread: what is found is the same either way.
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Look, look } from './look.ts'
import type { ObjectStore } from './store.ts'

/** A path to look at: from the repository's top, on disk, and its base blob id. */
export interface PendingPath {
  path: string
  full: string
  base: string | null
}

export interface LookBatch {
  store: ObjectStore
  startNs: bigint
  /** Where the batch starts among all the paths (said back with the answers). */
  from: number
  paths: PendingPath[]
}

export type LookAnswer = Look | { type: 'failed'; message: string }

/** A thread's answer as it arrives: an index entry as its place in the batch's one buffer of entries. */
type PackedAnswer = LookAnswer & { entryAt?: number; entryLength?: number }

/** Below this many paths, threads cost more to start than they save. */
const THREADS_FROM = 2_000
/** A thread is sent at most this many paths at a time, fewer towards the end, so the threads end at about the same time. */
const BATCH = 250
const LAST_BATCH = 32
/** Batches a thread holds at once: the next is there when it ends one, even while this thread hashes its own. */
const AHEAD = 2

/** Hashing threads, started before the paths are known (their start overlaps git's listing): unref'd until used. */
export interface Threads {
  workers: Promise<Worker | null>[]
}

type Worker = import('node:worker_threads').Worker

/** Threads to hash on beside this one (null: one core, or no thread script): stop them with stopThreads whatever happens. */
export function startThreads(): Threads | null {
  const script = workerScript()
  const count = Math.min(availableParallelism(), 4) - 1 // this thread hashes too: one thread fewer to start
  if (!script || count < 1) return null
  return { workers: Array.from({ length: count }, () => startWorker(script)) }
}

async function startWorker(script: string): Promise<Worker | null> {
  const { Worker } = await import('node:worker_threads')
  try {
    const worker = new Worker(script)
    worker.unref() // an unused thread never keeps the process alive; runThread holds it while it works
    // a thread that dies (even before it is used) leaves its paths to this thread (lookAll)
    const end = () => void ended.add(worker)
    worker.on('error', end)
    worker.on('exit', end)
    return worker
  } catch {
    return null
  }
}

/** Threads that died or ended: never waited on. */
const ended = new WeakSet<Worker>()

export function stopThreads(threads: Threads | null): void {
  for (const worker of threads?.workers ?? []) void worker.then((w) => w?.terminate()).catch(() => {})
}

/** What each path is now, in order; `threads` (started early, or null: started here if worth it) are stopped after. */
export async function lookAll(
  paths: PendingPath[],
  store: ObjectStore,
  startNs: bigint,
  threads: Threads | null = null,
): Promise<Look[]> {
  const here = (p: PendingPath) => look(p.path, p.full, p.base, store, startNs)
  if (paths.length < THREADS_FROM) {
    stopThreads(threads)
    return paths.map(here)
  }
  const pool = threads ?? startThreads()
  if (!pool) return paths.map(here)
  const found: (Look | undefined)[] = new Array(paths.length)
  const batches = batchesOf(paths.length, pool.workers.length + 1)
  try {
    const helpers = pool.workers.map((worker) => runThread(worker, { store, startNs, paths }, batches, found))
    await lookHere(paths, batches, found, here)
    await Promise.all(helpers)
  } finally {
    stopThreads(pool)
  }
  // what no thread answered (a thread that could not start, died, or met an error) is looked at here
  return found.map((look, i) => look ?? here(paths[i]!))
}

/** This thread taking batches too, letting the threads' answers in (and their next batches out) between two. */
async function lookHere(
  paths: PendingPath[],
  batches: Batch[],
  found: (Look | undefined)[],
  here: (p: PendingPath) => Look,
): Promise<void> {
  for (;;) {
    await new Promise<void>((resolve) => setImmediate(resolve))
    const batch = batches.shift()
    if (!batch) return
    for (let i = batch.from; i < batch.to; i++) found[i] = here(paths[i]!)
  }
}

/** A run of paths, [from, to). */
interface Batch {
  from: number
  to: number
}

/** The paths cut into batches that shrink as fewer are left (a share of what is left, between LAST_BATCH and BATCH). */
function batchesOf(count: number, threads: number): Batch[] {
  const batches: Batch[] = []
  for (let from = 0; from < count; ) {
    const size = Math.max(LAST_BATCH, Math.min(BATCH, Math.floor((count - from) / (4 * threads))))
    batches.push({ from, to: Math.min(count, from + size) })
    from += size
  }
  return batches
}

/** One thread taking batches (their first index) until none are left. */
async function runThread(
  started: Promise<Worker | null>,
  job: Omit<LookBatch, 'from' | 'paths'> & { paths: PendingPath[] },
  batches: Batch[],
  found: (Look | undefined)[],
): Promise<void> {
  const worker = await started
  if (!worker || ended.has(worker)) return
  worker.ref()
  await new Promise<void>((resolve) => {
    let held = 0
    const next = () => {
      const batch = batches.shift()
      if (!batch) return held === 0 && resolve()
      held++
      const { from, to } = batch
      worker.postMessage({ ...job, from, paths: job.paths.slice(from, to) } satisfies LookBatch)
    }
    type Answered = { from: number; answers: PackedAnswer[]; entries: ArrayBuffer }
    worker.on('message', ({ from, answers, entries }: Answered) => {
      held--
      answers.forEach((answer, k) => {
        if (answer.type === 'blob' && answer.entryAt !== undefined)
          answer.entry = new Uint8Array(entries, answer.entryAt, answer.entryLength) // a view: no copy
        if (answer.type !== 'failed') found[from + k] = answer
      })
      next()
    })
    worker.on('error', () => resolve())
    worker.on('exit', () => resolve())
    for (let i = 0; i < AHEAD; i++) next()
  })
  worker.removeAllListeners('message')
  worker.unref()
}

/** The hashing thread's script beside this module: the built one (dist/), or the sources where the runtime runs them. */
function workerScript(): string | null {
  const here = dirname(fileURLToPath(import.meta.url))
  const runsTypeScript = 'Bun' in globalThis || 'Deno' in globalThis
  const candidates = [
    ...(runsTypeScript ? [join(here, 'hash-worker.ts')] : []),
    join(here, 'hash-worker.cjs'), // the built chunks' (dist/chunks/)
    join(here, 'hash-worker.mjs'), // a bundle's beside it (bench/diff.mjs)
  ]
  return candidates.find((file) => existsSync(file)) ?? null
}
