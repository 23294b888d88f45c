// The reviewer CLIs' programs, resolved once by `start`: a path the person's config names (`<vendor>_bin`), else the one start finds on its PATH, recorded as found there. A review runs what the run recorded and
// never looks on the PATH of the command that asks (the coder's: a `codex` in $TMPDIR/bin would answer APPROVED).
import { isAbsolute, resolve } from 'node:path'
import type { Config } from '../run/config.ts'
import type { ReviewerProgram, RunState } from '../run/state.ts'
import { agentOf } from '../agents/registry.ts'
import { VENDORS, type Vendor } from '../run/vendors.ts'
import { findExecutable } from './reviewers.ts'

/** A config value that names a path (`/opt/bin/codex`, `./bin/codex`) rather than a name to look up. */
const isPath = (bin: string) => bin.includes('/')

/** Each vendor's program as start records it: from the config when it names a path, else found on start's PATH. */
export function resolvePrograms(
  config: Pick<Config, 'pair_loop'>,
  env: NodeJS.ProcessEnv,
  repo: string,
): NonNullable<RunState['reviewer_programs']> {
  const one = (tool: Vendor): ReviewerProgram => {
    const bin = agentOf(tool).bin(config.pair_loop)
    if (isPath(bin)) return { path: isAbsolute(bin) ? bin : resolve(repo, bin), source: 'config' }
    const found = findExecutable(bin, env, repo)
    return found ? { path: found, source: 'found at start' } : null
  }
  return Object.fromEntries(VENDORS.map((tool) => [tool, one(tool)])) as NonNullable<RunState['reviewer_programs']>
}
