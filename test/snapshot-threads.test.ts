// When a first snapshot starts its hashing threads before git has listed the paths: only when the index is big enough
// to list the 2,000 paths from which threads are used. A smaller index starts none early (a thread costs ~30 ms of CPU
// to start); a repository with many paths after all still gets them when the paths are handed over (hashing.ts).
import { describe, expect, it } from 'vitest'
import { threadsLikelyUsed } from '../lib/snapshot/hashing.ts'

describe('threads started before the listing', () => {
  // an index entry is at least 64 bytes (62 of fixed fields and a one-letter path, padded to a multiple of 8), so
  // 2,000 entries take at least 128,000 bytes
  it.each([
    [0, false],
    [1_200, false], // the index of a repository of a few files
    [127_999, false],
    [128_000, true],
    [3_000_000, true], // bench/diff's 30,000 files
  ])('an index of %i bytes: %s', (bytes, started) => {
    expect(threadsLikelyUsed(bytes)).toBe(started)
  })
})
