// Types of mock-billing.mjs, for the tests that import it (the mock itself runs as plain JavaScript under Node).

/** The input side of a billed request, in tokens: the whole prompt, read, written (5m / 1h), neither. */
export interface CacheBill {
  input: number
  cache_read: number
  cache_write_5m: number
  cache_write_1h: number
  uncached: number
}

export const CACHE_TTL_S: number
export function tokensOf(bytes: number): number
export function outputTokens(texts: string[]): number
export function createCacheBilling(options?: { ttlS?: number; now?: () => number }): {
  bill(api: string, model: string | null, body: unknown): CacheBill | null
}
