// The paths a snapshot must look at, looked at (look.ts): on this thread when they are few, or spread over this thread
// and hashing threads (hash-worker.ts, one fewer than the cores) when there are many, as on a first snapshot, where
// reading and hashing are most of the time. Paths may be handed over as git lists them (`Looking.add`), so the threads
// hash while this thread still reads the rest of the listing and the base; this thread joins in at `finish`.
// A thread that cannot start or dies leaves its paths to this thread: what is found is the same either way.
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FolderFiles } from './folder-files.ts'
import { type Look, look } from './look.ts'
import type { ObjectStore } from './store.ts'

/**
 * A path to look at, from the repository's top, and the blob id it is compared with (`base`): a file whose id differs
 * from it has its bytes written to the store. That is the base's id, or a hint taken before the base was read.
 */
export interface PendingPath {
  path: string
  base: string | null
}

export interface LookBatch {
  /** The repository's top on disk: a path's place is `${root}/${path}`. */
  root: string
  store: ObjectStore
  startNs: bigint
  /** Where the batch starts among all the paths (said back with the answers). */
  from: number
  paths: PendingPath[]
}

export type LookAnswer = Look | { type: 'failed'; message: string }

/**
 * A thread's answer as it arrives: an index entry as its place in the batch's one buffer of entries, and a blob id
 * equal to the one asked about sent as '' (the receiving thread has it: 30k copies of it cost it more to collect).
 */
export type PackedAnswer = LookAnswer & { entryAt?: number; entryLength?: number }

/** Below this many paths, threads cost more to start than they save. */
const THREADS_FROM = 2_000
/** A thread is sent at most this many paths at a time, fewer towards the end, so the threads end at about the same time. */
const BATCH = 250
const LAST_BATCH = 32
/**
 * Batches a thread holds at once: the next is there when it ends one, even while this thread is busy. Before `finish`
 * this thread reads git's answers and the base, so a thread holds more (this thread answers it less often).
 */
const AHEAD = 2
const AHEAD_EARLY = 16

/** Hashing threads, started before the paths are known (their start overlaps git's listing): unref'd until used. */
export interface Threads {
  workers: Promise<Worker | null>[]
}

type Worker = import('node:worker_threads').Worker

/** The fewest bytes an index entry takes (sha1: 62 bytes and a path of one letter, padded to 8): a size's path count. */
const LEAST_ENTRY_BYTES = 64

/**
 * Whether an index of `bytes` may list enough paths for threads to be worth starting before the listing: a hint only
 * (the index is the coder's to write), since threads still start at `finish` when there are many paths after all.
 */
export const threadsLikelyUsed = (indexBytes: number) => indexBytes >= THREADS_FROM * LEAST_ENTRY_BYTES

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
    worker.unref() // an unused thread never keeps the process alive; a Looking holds it while it works
    // a thread that dies (even before it is used) leaves its paths to this thread (Looking.finish)
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

/**
 * Paths looked at as they are added: once there are enough, the threads take them in batches while this thread does
 * other work; `finish` (after the last `add`) looks at what is left here too and hands over what each path is, in
 * order, as soon as it and all before it are known (so what is done with them overlaps the threads' last batches).
 * The threads are stopped by `finish`; a caller that never calls it stops them itself (stopThreads).
 */
export class Looking {
  readonly paths: PendingPath[] = []
  private readonly found: (Look | undefined)[] = []
  /** Paths up to here are cut into batches (sent to a thread or taken here). */
  private cut = 0
  private finishing = false
  /** The threads in use (null: not yet, or none). */
  private helpers: Helper[] | null = null

  constructor(
    private readonly root: string,
    private readonly store: ObjectStore,
    private readonly startNs: bigint,
    private threads: Threads | null,
  ) {}

  add(paths: PendingPath[]): void {
    for (const path of paths) this.paths.push(path)
    if (!this.helpers && this.threads && this.paths.length >= THREADS_FROM) this.useThreads(this.threads)
    this.feed()
  }

  /** Every path added, looked at: `take(i, look)` for each, in order (an error it throws is finish's). */
  async finish(take: (i: number, found: Look) => void): Promise<void> {
    this.finishing = true
    const many = this.paths.length >= THREADS_FROM
    if (!this.helpers && many) {
      this.threads ??= startThreads()
      if (this.threads) this.useThreads(this.threads)
    }
    if (!this.helpers) stopThreads(this.threads)
    let taken = 0
    let failed: { error: unknown } | null = null
    // also called as the threads' answers come in: never throws there (the error is thrown below)
    const takeKnown = () => {
      try {
        for (; !failed && taken < this.paths.length && this.found[taken]; taken++) {
          take(taken, this.found[taken]!)
          this.found[taken] = undefined // entered: not held twice
        }
      } catch (error) {
        failed = { error }
      }
    }
    this.answered = takeKnown
    try {
      this.feed()
      for (;;) {
        // the threads' answers in, their next batches out, between two batches here
        if (this.helpers) await new Promise<void>((resolve) => setImmediate(resolve))
        const batch = this.nextBatch()
        if (!batch) break
        const folders = new FolderFiles() // read fresh for each batch
        for (let i = batch.from; i < batch.to; i++) this.found[i] = this.here(this.paths[i]!, folders)
        takeKnown()
      }
      await Promise.all((this.helpers ?? []).map((helper) => helper.done))
    } finally {
      this.answered = null
      stopThreads(this.threads)
    }
    takeKnown()
    if (failed) throw (failed as { error: unknown }).error
    // what no thread answered (a thread that could not start, died, or met an error) is looked at here
    for (; taken < this.paths.length; taken++) take(taken, this.found[taken] ?? this.here(this.paths[taken]!))
  }

  /** Called when a thread's answers are in (while finishing). */
  private answered: (() => void) | null = null

  private here({ path, base }: PendingPath, folders?: FolderFiles): Look {
    return look(path, `${this.root}/${path}`, base, this.store, this.startNs, folders)
  }

  /** The next run of paths to look at, [from, to): whole batches while more may come, then shrinking ones. */
  private nextBatch(): { from: number; to: number } | null {
    const left = this.paths.length - this.cut
    if (left <= 0 || (!this.finishing && left < BATCH)) return null
    const threads = (this.helpers?.length ?? 0) + 1
    const size = this.finishing ? Math.max(LAST_BATCH, Math.min(BATCH, Math.floor(left / (4 * threads)))) : BATCH
    const from = this.cut
    this.cut = Math.min(this.paths.length, from + size)
    return { from, to: this.cut }
  }

  private useThreads(threads: Threads): void {
    this.helpers = threads.workers.map((started) => this.helper(started))
  }

  /** Each thread that is ready sent batches, up to what it may hold. */
  private feed(): void {
    for (const helper of this.helpers ?? []) helper.feed()
  }

  /** One thread taking batches until none are left; `done` when it has answered all it took (or died). */
  private helper(started: Promise<Worker | null>): Helper {
    let worker: Worker | null = null
    let held = 0
    let over = false
    let end: () => void = () => {}
    const done = new Promise<void>((resolve) => {
      end = resolve
    })
    const finishIf = () => {
      if (over || !this.finishing || held > 0 || this.cut < this.paths.length) return
      over = true
      worker?.removeAllListeners('message')
      worker?.unref()
      end()
    }
    const helper: Helper = {
      done,
      feed: () => {
        if (!worker || over) return
        for (let limit = this.finishing ? AHEAD : AHEAD_EARLY; held < limit; ) {
          const batch = this.nextBatch()
          if (!batch) break
          held++
          const job: LookBatch = {
            root: this.root,
            store: this.store,
            startNs: this.startNs,
            from: batch.from,
            paths: this.paths.slice(batch.from, batch.to),
          }
          worker.postMessage(job)
        }
        finishIf()
      },
    }
    type Answered = { from: number; answers: PackedAnswer[]; entries: ArrayBuffer }
    const gone = () => {
      over = true
      end()
    }
    void started.then((ready) => {
      if (!ready || ended.has(ready)) return gone()
      worker = ready
      worker.ref()
      worker.on('message', ({ from, answers, entries }: Answered) => {
        held--
        answers.forEach((answer, k) => {
          if (answer.type === 'blob') {
            if (answer.oid === '') answer.oid = this.paths[from + k]!.base!
            if (answer.entryAt !== undefined) answer.entry = new Uint8Array(entries, answer.entryAt, answer.entryLength) // a view: no copy
          }
          if (answer.type !== 'failed') this.found[from + k] = answer
        })
        helper.feed()
        this.answered?.()
      })
      worker.on('error', gone)
      worker.on('exit', gone)
      helper.feed()
    })
    return helper
  }
}

interface Helper {
  done: Promise<void>
  feed: () => void
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
