// What every bench here shares: where the built CLI is, a whole-number option, and the median of samples.
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const CLI = join(ROOT, 'dist', 'pair-loop.cjs')

/** `--name N` as a whole number of at least `min` (the fallback when it is not given). */
export function option(name, fallback, { min = 1 } = {}) {
  const at = process.argv.indexOf(`--${name}`)
  if (at === -1) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} takes ${min === 1 ? 'a positive integer' : `a whole number from ${min}`}`)
  return value
}

/** Stop with a word when the CLI has not been built. */
export function requireBuilt(cli = CLI) {
  if (existsSync(cli)) return
  console.error(`${cli} is missing: run \`npm run build\` first`)
  process.exit(1)
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
