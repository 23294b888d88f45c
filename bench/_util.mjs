// What every bench here shares: where the built CLI is, a whole-number option, the median of samples, and the
// environment its commands run in (nothing of the developer's: its own HOME, PAIR_LOOP_HOME and agents' folders).
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

/** The environment of a bench's commands, for a home of its own; `extra` adds to it or takes a key's place. */
export function benchEnv(home, extra = {}) {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    PAIR_LOOP_HOME: join(home, '.pair-loop'),
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    CODEX_HOME: join(home, '.codex'),
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    NO_COLOR: '1',
    ...extra,
  }
}
