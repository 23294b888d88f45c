// The paths a snapshot must look at, looked at (look.ts): on this thread when they are few, or spread over hashing
// threads (hash-worker.ts) when there are many, as on a first snapshot, where reading and hashing are most of the time.
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
  paths: PendingPath[]
}

export type LookAnswer = Look | { type: 'failed'; message: string }

/** A thread's answer as it arrives: an index entry as its place in the batch's one buffer of entries. */
type PackedAnswer = LookAnswer & { entryAt?: number; entryLength?: number }

/** Below this many paths, threads cost more to start than they save. */
const THREADS_FROM = 2_000
/** A thread is sent this many paths at a time, so the threads end at about the same time. */
const BATCH = 500

/** What each path is now, in order. */
export async function lookAll(paths: PendingPath[], store: ObjectStore, startNs: bigint): Promise<Look[]> {
  const here = (p: PendingPath) => look(p.path, p.full, p.base, store, startNs)
  const script = paths.length < THREADS_FROM ? null : workerScript()
  const count = Math.min(availableParallelism(), 4)
  if (!script || count < 2) return paths.map(here)
  const found: (Look | undefined)[] = new Array(paths.length)
  const batches: number[] = []
  for (let from = 0; from < paths.length; from += BATCH) batches.push(from)
  await Promise.all(Array.from({ length: count }, () => runThread(script, { store, startNs, paths }, batches, found)))
  // what no thread answered (a thread that could not start, died, or met an error) is looked at here
  return found.map((look, i) => look ?? here(paths[i]!))
}

/** One thread taking batches (their first index) until none are left. */
async function runThread(
  script: string,
  job: LookBatch,
  batches: number[],
  found: (Look | undefined)[],
): Promise<void> {
  const { Worker } = await import('node:worker_threads')
  let worker: InstanceType<typeof Worker>
  try {
    worker = new Worker(script)
  } catch {
    return
  }
  await new Promise<void>((resolve) => {
    let from = -1
    const next = () => {
      const batch = batches.shift()
      if (batch === undefined) return void worker.terminate().then(() => resolve(), resolve)
      from = batch
      worker.postMessage({ ...job, paths: job.paths.slice(from, from + BATCH) } satisfies LookBatch)
    }
    worker.on('message', ({ answers, entries }: { answers: PackedAnswer[]; entries: ArrayBuffer }) => {
      answers.forEach((answer, k) => {
        if (answer.type === 'blob' && answer.entryAt !== undefined)
          answer.entry = Buffer.from(entries, answer.entryAt, answer.entryLength) // a view: no copy
        if (answer.type !== 'failed') found[from + k] = answer
      })
      next()
    })
    worker.on('error', () => resolve())
    worker.on('exit', () => resolve())
    next()
  })
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
