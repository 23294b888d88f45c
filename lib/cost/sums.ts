// What the transcript readers yield, vendor-neutral: kept responses (as items or visits), and their sums per time
// window and model, which a transcript's cache can keep so that the next check adds only what is new.
import type { Tokens } from './pricing.ts'

/** One kept (de-duplicated) API response. */
export interface UsageItem {
  ts: number
  model: string
  tokens: Tokens
  usd: number
  priced: boolean
}

/** Called once per kept response; the token counts come as plain numbers (no object per response). */
export type UsageVisitor = (
  ts: number,
  model: string,
  priced: boolean,
  usd: number,
  input: number,
  output: number,
  w5m: number,
  w1h: number,
  read: number,
) => void

/** The visits of `run` as a list. */
export function collect(run: (visit: UsageVisitor) => void): UsageItem[] {
  const items: UsageItem[] = []
  run((ts, model, priced, usd, input, output, w5m, w1h, read) => {
    items.push({
      ts,
      model,
      priced,
      usd,
      tokens: { input, output, cache_write_5m: w5m, cache_write_1h: w1h, cache_read: read },
    })
  })
  return items
}

/** Numbers per (window, model) cell: usd, input, output, 5m writes, 1h writes, reads. */
export const CELL = 6

/**
 * USD and tokens per (time window, model), for the ledger: window w is [bounds[w], bounds[w + 1]); responses before
 * the first bound or at/after the last are left out. Responses are added one by one, in order, so sums resumed from
 * a saved state (see PartialSums) equal, to the bit, sums taken from the first response.
 */
export class UsageSums {
  readonly models: string[] = []
  readonly priced: boolean[] = []
  /** Per model: [window × CELL]. */
  readonly data: Float64Array[] = []
  private indexOf = new Map<string, number>()
  constructor(readonly bounds: number[]) {}

  get windows() {
    return this.bounds.length - 1
  }

  /** The window of a timestamp, or -1 outside them. */
  window(ts: number): number {
    const b = this.bounds
    if (!(ts >= b[0]!) || ts >= b[b.length - 1]!) return -1
    let w = 0
    while (w + 2 < b.length && ts >= b[w + 1]!) w++
    return w
  }

  model(name: string, priced: boolean): number {
    let m = this.indexOf.get(name)
    if (m === undefined) {
      m = this.models.push(name) - 1
      this.priced.push(priced)
      this.data.push(new Float64Array(this.windows * CELL))
      this.indexOf.set(name, m)
    }
    return m
  }

  add(w: number, m: number, usd: number, input: number, output: number, w5m: number, w1h: number, read: number): void {
    const d = this.data[m]!
    const at = w * CELL
    d[at] = d[at]! + usd
    d[at + 1] = d[at + 1]! + input
    d[at + 2] = d[at + 2]! + output
    d[at + 3] = d[at + 3]! + w5m
    d[at + 4] = d[at + 4]! + w1h
    d[at + 5] = d[at + 5]! + read
  }

  /** Move a model to the end of the list (where a sum taken from the first response would have registered it). */
  moveLast(name: string): void {
    const m = this.indexOf.get(name)
    if (m === undefined || m === this.models.length - 1) return
    const [model] = this.models.splice(m, 1)
    const [priced] = this.priced.splice(m, 1)
    const [data] = this.data.splice(m, 1)
    this.models.push(model!)
    this.priced.push(priced!)
    this.data.push(data!)
    for (let i = m; i < this.models.length; i++) this.indexOf.set(this.models[i]!, i)
  }

  /** The state after the first `upTo` entries of a transcript, to be kept in its cache under `key`. */
  save(key: string, upTo: number): PartialSums {
    return { key, upTo, models: [...this.models], priced: [...this.priced], data: this.data.map((d) => [...d]) }
  }

  /** Sums that go on from a saved state (same bounds: the key says so), or null if it does not fit them. */
  static resume(bounds: number[], saved: PartialSums): UsageSums | null {
    const sums = new UsageSums(bounds)
    const size = sums.windows * CELL
    for (let i = 0; i < saved.models.length; i++) {
      const data = saved.data[i]
      if (!Array.isArray(data) || data.length !== size || typeof saved.models[i] !== 'string') return null
      sums.data[sums.model(saved.models[i]!, saved.priced[i] === true)]!.set(data)
    }
    return sums.models.length === saved.models.length ? sums : null
  }
}

/**
 * A transcript's sums over its first `upTo` kept entries, for one set of windows and prices (`key`). Kept in the
 * transcript's cache: the next check adds only the entries from `upTo` on, as long as none before it has changed.
 */
export interface PartialSums {
  key: string
  upTo: number
  models: string[]
  priced: boolean[]
  data: number[][]
}

/** Whether a saved state fits: same windows and prices, and within the entries the cache holds. */
export function isPartialSums(value: unknown, count: number): value is PartialSums {
  const s = value as PartialSums | null
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.key === 'string' &&
    Number.isInteger(s.upTo) &&
    s.upTo >= 0 &&
    s.upTo <= count &&
    Array.isArray(s.models) &&
    Array.isArray(s.priced) &&
    Array.isArray(s.data) &&
    s.models.length === s.priced.length &&
    s.models.length === s.data.length
  )
}

/** Entries this close to the end are summed again on every check: the latest responses are the ones still changing. */
export const UNSETTLED = 64

/** Where a cache's saved sums should stop: the recent entries stay out (they may still be replaced). */
export const settledCount = (from: number, count: number) => Math.max(from, count - UNSETTLED)

/** The key of a set of windows and prices: the saved sums are reused only under the same key. */
export const sumsKey = (bounds: number[], pricesKey: string) => `${bounds.join(',')}|${pricesKey}`

/**
 * A transcript's sums, going on from those its cache kept under the same `key` (windows and prices): `add(sums, from,
 * to)` adds entries; all but the latest (which may still be replaced) are kept for the next check.
 */
export function resumeSums(
  bounds: number[],
  key: string,
  saved: PartialSums | null,
  count: number,
  add: (sums: UsageSums, start: number, end: number) => void,
): { sums: UsageSums; keep: PartialSums } {
  const resumed = saved?.key === key ? UsageSums.resume(bounds, saved) : null
  const sums = resumed ?? new UsageSums(bounds)
  const from = resumed ? saved!.upTo : 0
  const settled = settledCount(from, count)
  add(sums, from, settled)
  const keep = sums.save(key, settled)
  add(sums, settled, count)
  return { sums, keep }
}
