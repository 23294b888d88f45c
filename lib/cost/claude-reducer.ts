// Claude Code writes one line per content block of a response, copies lines into resumed sessions and replays
// subagent responses on sidechains: the reducer keeps one entry per API response, as ccusage 20.0.24 does.
import type { EntryStore } from './line-reader.ts'

// Entry layout (numbers): timestamp ms, flags, model index (-1 none), input, output, 5m writes, 1h writes, reads,
// hash of message.id, hash of requestId (-1 when absent). The keys are kept as two independent 52-bit hashes: a
// (message.id, requestId) pair is matched on 104 bits, so a false match is not a practical possibility; a bare
// message.id (the sidechain rule) on 52, about one chance in 10^8 for a long session with many sidechain lines.
export const F_SIDECHAIN = 1
export const F_SPEED = 2
export const F_MSG_ID = 4
/** A kept copy that a later copy off the sidechain replaced. */
export const F_REMOVED = 8
export const WIDTH = 10

/**
 * A set of responses reduced as ccusage 20.0.24 reduces copies of one response (as its `daily` report does).
 * Lines without message.id are never merged. Same (message.id, requestId): one response; a copy off the sidechain
 * beats one on it, otherwise the larger token total wins, on a tie the one with `usage.speed`, then the first seen.
 * Same message.id with another requestId, either copy on a sidechain: a sidechain replay of the same response,
 * where again the copy off the sidechain wins (and of two sidechain copies, the larger). (ccusage's `session` report
 * merges such replays only when their timestamps are equal: a known disagreement between its two reports.)
 *
 * The result depends only on the set of lines (up to exact ties), so each file is reduced as it is read (its cache
 * holds only kept responses) and several files are reduced again together. Entries live in one float64 array; an
 * open-addressing table finds the chain of kept entries with the same message.id: no object per line.
 */
export class ClaudeReducer implements EntryStore {
  count: number
  /** The lowest index of an entry changed in place (replaced or removed) since the reducer was made. */
  firstChanged = Number.POSITIVE_INFINITY
  /** The table was rebuilt since the reducer was made (the one handed in no longer describes it). */
  indexReplaced = false
  private changedRows: number[] = []
  private numbers: Float64Array
  private table: Int32Array | null = null
  private next: Int32Array = new Int32Array(0)
  private mask = 0

  /**
   * `initial` holds `count` entries and may have room for more; `index` is what index() saved for the first
   * `indexed` of them (the others are added to it here), maybe with room for more.
   */
  constructor(
    initial: Float64Array = new Float64Array(0),
    count = 0,
    index: Int32Array | null = null,
    indexed = count,
  ) {
    this.count = count
    this.numbers = initial // changed in place; grown (copied) only when an added entry does not fit
    // the table saved beside the entries: [size, table (size), next (count)]
    const size = index?.[0] ?? 0
    if (index && size >= 1024 && (size & (size - 1)) === 0 && index.length >= 1 + size + count && count * 2 <= size) {
      this.table = index.subarray(1, 1 + size)
      this.next = index.subarray(1 + size)
      this.mask = size - 1
      // entries after the index was saved: into their chains, newest first, as offer() would have put them
      for (let e = indexed; e < count; e++) if (initial[e * WIDTH + 1]! & F_MSG_ID) this.link(e)
    }
  }

  /** Entries changed in place since the reducer was made. */
  changed(): number[] {
    return this.changedRows
  }

  view(): Float64Array {
    return this.numbers.subarray(0, this.count * WIDTH)
  }

  /** The table and chains, to be saved beside the entries so the next check need not rebuild them. */
  index(): Int32Array[] {
    if (!this.table) return []
    return [Int32Array.of(this.table.length), this.table, this.next.subarray(0, this.count)]
  }

  add(values: number[]): void {
    this.offer(values, 0)
  }

  /** Take the entry at `src[at …]`: keep it, let it replace the copy kept so far, or drop it. */
  offer(src: ArrayLike<number>, at: number): void {
    const flags = src[at + 1]!
    if (flags & F_REMOVED) return
    if (!(flags & F_MSG_ID)) {
      this.push(src, at)
      return
    }
    if (!this.table) this.rebuild()
    const n = this.numbers
    const msg = src[at + 8]!
    const req = src[at + 9]!
    const side = (flags & F_SIDECHAIN) !== 0
    const t = this.slotOf(msg)
    const head = this.table![t]!
    let exact = -1
    let anyMain = false
    let firstSide = -1
    for (let k = head; k !== -1; k = this.next[k]!) {
      const kf = n[k * WIDTH + 1]!
      if (kf & F_REMOVED) continue
      if (n[k * WIDTH + 9] === req) exact = k
      if (kf & F_SIDECHAIN) {
        if (firstSide < 0) firstSide = k
      } else anyMain = true
    }
    if (exact >= 0) {
      // the same response again (another content block, a partial early copy, a resumed session's copy)
      const exactSide = (n[exact * WIDTH + 1]! & F_SIDECHAIN) !== 0
      if (side !== exactSide ? !side : this.beats(src, at, exact)) this.copyInto(exact, src, at)
      return
    }
    if (side) {
      // a sidechain replay of a response already kept
      if (anyMain) return
      if (firstSide >= 0) {
        if (this.beats(src, at, firstSide)) this.copyInto(firstSide, src, at)
        return
      }
    } else {
      // a response off the sidechain replaces its sidechain replays kept so far
      for (let k = head; k !== -1; k = this.next[k]!) {
        const kf = n[k * WIDTH + 1]!
        if (kf & F_SIDECHAIN && !(kf & F_REMOVED)) {
          n[k * WIDTH + 1] = kf | F_REMOVED
          this.touch(k)
        }
      }
    }
    const e = this.push(src, at)
    if (this.count * 2 > this.table!.length) {
      this.rebuild() // keep the table at most half full
      return
    }
    this.next[e] = this.table![t]!
    this.table![t] = e
  }

  /** Put entry e at the head of its message.id's chain. */
  private link(e: number): void {
    const t = this.slotOf(this.numbers[e * WIDTH + 8]!)
    this.next[e] = this.table![t]!
    this.table![t] = e
  }

  /** Visit every kept entry (index into view()). */
  forEach(each: (numbers: Float64Array, at: number) => void): void {
    const n = this.numbers
    for (let e = 0; e < this.count; e++) if (!(n[e * WIDTH + 1]! & F_REMOVED)) each(n, e * WIDTH)
  }

  private touch(k: number): void {
    if (k < this.firstChanged) this.firstChanged = k
    this.changedRows.push(k)
  }

  private beats(src: ArrayLike<number>, at: number, k: number): boolean {
    const n = this.numbers
    const p = k * WIDTH
    const ta = src[at + 3]! + src[at + 4]! + src[at + 5]! + src[at + 6]! + src[at + 7]!
    const tb = n[p + 3]! + n[p + 4]! + n[p + 5]! + n[p + 6]! + n[p + 7]!
    if (ta !== tb) return ta > tb
    return (src[at + 1]! & F_SPEED) !== 0 && (n[p + 1]! & F_SPEED) === 0
  }

  private copyInto(k: number, src: ArrayLike<number>, at: number): void {
    for (let i = 0; i < WIDTH; i++) this.numbers[k * WIDTH + i] = src[at + i]!
    this.touch(k)
  }

  private push(src: ArrayLike<number>, at: number): number {
    const e = this.count
    if ((e + 1) * WIDTH > this.numbers.length) {
      const grown = new Float64Array(Math.max(1024 * WIDTH, this.numbers.length * 2))
      grown.set(this.numbers)
      this.numbers = grown
    }
    if (this.table && e >= this.next.length) {
      const grown = new Int32Array(Math.max(e + 1, this.numbers.length / WIDTH))
      grown.set(this.next)
      this.next = grown
    }
    for (let i = 0; i < WIDTH; i++) this.numbers[e * WIDTH + i] = src[at + i]!
    this.count++
    return e
  }

  /** The table slot for a message.id hash: the one holding its chain, or the empty one where it would go. */
  private slotOf(msg: number): number {
    const table = this.table!
    const n = this.numbers
    let t = (msg % table.length) & this.mask
    while (table[t] !== -1 && n[table[t]! * WIDTH + 8] !== msg) t = (t + 1) & this.mask
    return t
  }

  /** (Re)build the table over the kept entries that have a message.id. */
  private rebuild(): void {
    let size = 1024
    while (size < this.count * 4) size *= 2
    this.indexReplaced = true
    this.table = new Int32Array(size).fill(-1)
    this.mask = size - 1
    if (this.next.length < this.numbers.length / WIDTH) {
      const grown = new Int32Array(this.numbers.length / WIDTH)
      grown.set(this.next)
      this.next = grown
    }
    const n = this.numbers
    for (let e = 0; e < this.count; e++) {
      const flags = n[e * WIDTH + 1]!
      if (!(flags & F_MSG_ID) || flags & F_REMOVED) continue
      const t = this.slotOf(n[e * WIDTH + 8]!)
      this.next[e] = this.table[t]!
      this.table[t] = e
    }
  }
}
