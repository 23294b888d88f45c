// setup: the person's one-time step (never the coder's: it asks nothing, and what it writes decides who reviews). It
// finds the agents' CLIs on the person's PATH and records their absolute paths, and the agents' folders the person's
// environment names, in the home config (every other key kept), so no run looks them up on a coder's PATH. Each step
// is one entry of SETUP_STEPS: it reads the person's environment and sets its keys; a second run changes nothing.
// Last, pair-loop's MCP entries in the person's Claude Code and Codex configs (lib/mcp/install.ts): a sandboxed coder's
// only writer of $PAIR_LOOP_HOME (`--skip-mcp` leaves those files alone).
import { realpathSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { type ConfigFile, DEFAULTS, readConfig } from '../run/config.ts'
import { VENDORS, type Vendor } from '../run/vendors.ts'
import { AGENT_MODULES } from '../agents/registry.ts'
import { type Context, context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { configPath } from '../ground/paths.ts'
import { findExecutable } from '../review/reviewers.ts'
import { packageRoot } from '../ground/package.ts'
import { installMcpEntries, mcpPaths, tempRootsOf } from '../mcp/install.ts'

export interface SetupOptions {
  /** A PAIR_LOOP_HOME under /tmp is a test's or the demo's, never a person's: refused unless this says so. */
  allowTempHome: boolean
  /** Leave the agents' MCP entries alone (the person configures their CLIs themselves). */
  skipMcp?: boolean
}

/** One step of setup: what it found in the person's environment, set into the config (null: found nothing to set). */
interface SetupStep {
  name: string
  apply: (config: ConfigFile, ctx: Context) => Record<string, string | null>
}

type PairLoopKeys = NonNullable<ConfigFile['pair_loop']>

/** Sets `key` of the pair_loop section to `value` when found (a key found before and not now is kept): the value. */
function record(config: ConfigFile, key: keyof PairLoopKeys, value: string | null): string | null {
  if (value === null) return (config.pair_loop?.[key] as string | undefined) ?? null
  config.pair_loop = { ...config.pair_loop, [key]: value }
  return value
}

export const SETUP_STEPS: SetupStep[] = [
  {
    name: 'reviewer programs', // the absolute path of each CLI on the person's PATH: what a run runs as its reviewer
    apply: (config, ctx) =>
      Object.fromEntries(
        Object.values(AGENT_MODULES).map((agent) => {
          const key = binKey(agent.name)
          return [key, record(config, key, findExecutable(agent.bin(DEFAULTS.pair_loop), ctx.env, ctx.cwd))]
        }),
      ),
  },
  {
    name: 'agent folders', // where the person's agents keep config and transcripts, when their environment moves it
    apply: (config, ctx) =>
      Object.fromEntries(
        Object.values(AGENT_MODULES).map(({ home }) => [
          home.key,
          record(config, home.key, absolute(ctx.env[home.env], ctx.cwd)),
        ]),
      ),
  },
]

const binKey = (vendor: Vendor) => `${vendor}_bin` as const

const absolute = (value: string | undefined, cwd: string) => (value ? resolve(cwd, value) : null)

export function run(ctx: Context, options: SetupOptions) {
  if (!options.allowTempHome) checkHomeNotTemp(ctx.home)
  const path = configPath(ctx.home)
  const before = readConfig(path)?.parsed ?? {} // a broken file is config_invalid: setup never overwrites it
  const config: ConfigFile = structuredClone(before)
  const steps = SETUP_STEPS.map((step) => ({ step: step.name, recorded: step.apply(config, ctx) }))
  const changed = JSON.stringify(config) !== JSON.stringify(before)
  if (changed) writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`, 0o600)
  const recorded = Object.assign({}, ...steps.map((step) => step.recorded)) as Record<string, string | null>
  const missing = VENDORS.filter((vendor) => recorded[binKey(vendor)] === null)
  for (const vendor of missing)
    ctx.io.stderr(`pair-loop setup: ${vendor} is not on your PATH: install it (if you use it), then run setup again\n`)
  const mcp = options.skipMcp ? null : mcpEntries(ctx, options.allowTempHome)
  return {
    config_path: path,
    changed: changed || Boolean(mcp?.changed),
    recorded,
    steps,
    not_found: missing,
    mcp,
  }
}

/** pair-loop's MCP server in both agents' configs, started as this install's own `pair-loop mcp`. */
function mcpEntries(ctx: Context, testHome: boolean) {
  const root = packageRoot()
  if (!root) fail('internal', 'cannot find the pair-loop package this runs from')
  return installMcpEntries({
    command: process.execPath,
    args: [join(root.dir, 'bin', 'pair-loop.cjs'), 'mcp'],
    pairLoopHome: ctx.home,
    agents: ['claude', 'codex'],
    paths: mcpPaths(ctx.env, ctx.home),
    test: testHome,
    tempRoots: tempRootsOf(ctx),
  })
}

/** A home under /tmp (or the OS temp folder) is anyone's to write and gone at reboot: `usage`, naming the flag. */
function checkHomeNotTemp(home: string): void {
  const temps = tempRootsOf({ env: context().env }).flatMap((temp) => [temp, real(temp)])
  if (!temps.some((temp) => below(real(home), temp) || below(home, temp))) return
  fail(
    'usage',
    `PAIR_LOOP_HOME (${home}) is under a temporary folder: your decisions would be anyone's to rewrite and lost at reboot; set PAIR_LOOP_HOME elsewhere (default ~/.pair-loop), or pass --allow-temp-home for a test or the demo`,
    { home, flag: '--allow-temp-home' },
  )
}

const below = (path: string, dir: string) => {
  const rest = relative(dir, path)
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest))
}

function real(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
