// A fast string hash for de-duplication keys and cache file names (node:crypto costs a start-up for nothing here).

/** A 52-bit hash of a string (two 32-bit FNV-1a-style passes with different primes), exact in a float64. */
export function hash52(text: string): number {
  let a = 0x811c9dc5
  let b = 0x9747b28c
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b ^= b >>> 15
  }
  return (a >>> 0) * 0x100000 + ((b >>> 12) & 0xfffff)
}
