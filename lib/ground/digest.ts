// Hex digests. node:crypto takes about 3 ms to load, more than a warm budget check's own work: it is loaded on the
// first digest, so a command that never hashes (budget-check, status) never pays for it.
import type { BinaryLike } from 'node:crypto'
import { createRequire } from 'node:module'

let loaded: typeof import('node:crypto') | undefined
const nodeCrypto = () => (loaded ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'))

/** The hex digest of `data` (`sha256`, or `sha1` for a SHA-1 git repository's object ids). */
export function hexDigest(data: BinaryLike, algorithm: 'sha256' | 'sha1' = 'sha256'): string {
  const crypto = nodeCrypto()
  // crypto.hash (node 20.12+, Bun) makes no Hash object: for the snapshot's thousands of small files that is felt
  if (typeof crypto.hash === 'function') return crypto.hash(algorithm, data, 'hex')
  return crypto.createHash(algorithm).update(data).digest('hex')
}

/** A hash to feed in parts (a file read a chunk at a time). */
export function createDigest(algorithm: 'sha256' | 'sha1'): import('node:crypto').Hash {
  return nodeCrypto().createHash(algorithm)
}
