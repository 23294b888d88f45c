// Which of the flags pair-loop relies on a reviewer CLI has: read from its own `--help`, once per binary (path,
// size and mtime), and cached under $PAIR_LOOP_HOME/cache/, so an older CLI gets the old command line, not an error.
import { spawnSync } from 'node:child_process'
import { realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { context } from '../ground/context.ts'
import { readJsonRecord, writeFileAtomic } from '../ground/fsutil.ts'
import { cacheDir, pairLoopHome } from '../ground/paths.ts'
import { agentOf } from '../agents/registry.ts'
import type { CliFlags } from '../agents/types.ts'
import type { Vendor } from '../run/vendors.ts'

const HELP_TIMEOUT_MS = 15_000
const CACHE_FILE = 'reviewer-flags.json'
const MAX_ENTRIES = 32

/** Where the help lists a flag: `--name` as a whole word (not a prefix of a longer flag). */
export function flagsInHelp(tool: Vendor, help: string): Set<string> {
  return new Set(
    agentOf(tool).help.wanted.filter((flag) => new RegExp(`(^|[\\s,\\[])${flag}(?![\\w-])`, 'm').test(help)),
  )
}

/** The wanted flags `bin` lists in its help (the module's help argv); none when it gives no help. */
export function cliFlags(tool: Vendor, bin: string, env: NodeJS.ProcessEnv = context().env): CliFlags {
  const key = binaryKey(tool, bin)
  const file = join(cacheDir(pairLoopHome(env)), CACHE_FILE)
  const cache = readCache(file)
  const cached = key ? cache[key] : undefined
  if (cached) return new Set(cached.filter((flag) => agentOf(tool).help.wanted.includes(flag)))
  const help = spawnSync(bin, agentOf(tool).help.argv, {
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: HELP_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 4 * 1024 * 1024,
  })
  if (help.status !== 0 || help.error) return new Set() // no help: the plain command line; asked again next time
  const flags = flagsInHelp(tool, `${help.stdout}\n${help.stderr}`)
  if (key) writeCache(file, Object.fromEntries([...Object.entries(cache).slice(-(MAX_ENTRIES - 1)), [key, [...flags]]]))
  return flags
}

/** The binary's identity for the cache: its real path, size and mtime (an upgrade in place changes the entry). */
function binaryKey(tool: Vendor, bin: string): string | null {
  try {
    const real = realpathSync(bin)
    const stat = statSync(real)
    // the flags looked for are part of the key: a list that grows asks the binary again
    return `${tool}\0${real}\0${stat.size}\0${stat.mtimeMs}\0${agentOf(tool).help.wanted.join(' ')}`
  } catch {
    return null
  }
}

const isFlagList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((flag) => typeof flag === 'string')

const readCache = (file: string) => readJsonRecord(file, isFlagList)

/** Best effort (a cache): written whole or not at all, without the flushes state needs. */
function writeCache(file: string, cache: Record<string, string[]>): void {
  try {
    writeFileAtomic(file, `${JSON.stringify(cache, null, 2)}\n`, 0o600, { durable: false })
  } catch {}
}
