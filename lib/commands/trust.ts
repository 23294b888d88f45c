// trust: the person trusts this repository's .pair-loop.json, by its exact content, so keys that run a program, move
// money or decide what counts are honoured from it, and the files inside the working tree that the config's commands
// run, by theirs; `show` says where things stand, `revoke` takes the trust back.
import { join } from 'node:path'
import { blobAtBase } from '../run/config-base.ts'
import { type ConfigText, DEFAULTS, keysNeedingTrust, readConfig, REPO_CONFIG_NAME, settingsOf } from '../run/config.ts'
import type { Context } from '../ground/context.ts'
import { fail, isPairLoopError } from '../ground/errors.ts'
import { headSha, topLevel } from '../ground/git.ts'
import { gitObjectId } from '../ground/git-object-id.ts'
import { configPath } from '../ground/paths.ts'
import { configuredInTree } from '../review/reviewers.ts'
import { readInTree } from '../review/trusted-programs.ts'
import { setTrust, trustedPrograms, trustedSha } from '../run/trust.ts'

export interface TrustOptions {
  /** `trust` the file as it is now, `show` where things stand (changing nothing), or `revoke` the trust. */
  action: 'trust' | 'show' | 'revoke'
  cwd?: string
}

interface Program {
  path: string
  sha256: string
}

export async function run(ctx: Context, options: TrustOptions) {
  const repo = await topLevel(options.cwd ?? ctx.cwd)
  const path = join(repo, REPO_CONFIG_NAME)
  const file = readConfig(path)
  const own = readConfig(configPath(ctx.home))?.parsed
  const tracked = file ? await trackedAtHead(repo, file) : true
  const keys = file ? keysNeedingTrust(file.parsed, own, { tracked }) : []
  const effective = { pair_loop: { ...DEFAULTS.pair_loop, ...own?.pair_loop, ...file?.parsed.pair_loop } }
  const programs: Program[] = configuredInTree(effective, repo).map((program) => ({
    path: program,
    sha256: readInTree(program, 'a configured command').sha256,
  }))
  if (!file && programs.length === 0 && options.action === 'trust')
    fail('usage', `${path} does not exist: there is nothing to trust`, { path })
  const recorded = trustedPrograms(repo, ctx.home)
  const matches = (program: Program) => recorded[program.path] === program.sha256
  const document = (trusted: boolean, changed: boolean, programTrusted: (program: Program) => boolean) => ({
    path,
    sha256: file?.sha256 ?? null,
    trusted,
    trusted_keys: trusted ? keys : [],
    keys_needing_trust: keys,
    // what each key does with its value, in the person's words: what trusting the file lets it do
    settings: file ? settingsOf(file.parsed, own, keys) : [],
    tracked_at_head: file ? tracked : null,
    programs: programs.map((program) => ({ ...program, trusted: programTrusted(program) })),
    changed,
  })
  if (options.action === 'show') {
    const configTrusted = file ? trustedSha(path, ctx.home) === file.sha256 : programs.length > 0
    return document(configTrusted && programs.every(matches), false, matches)
  }
  if (options.action === 'revoke')
    return document(false, await setTrust(path, null, ctx.home, { repo, files: null }), () => false)
  const files = programs.length > 0 ? Object.fromEntries(programs.map((p) => [p.path, p.sha256])) : null
  return document(true, await setTrust(path, file?.sha256 ?? null, ctx.home, { repo, files }), () => true)
}

/** Whether the file is what git tracks at HEAD, the base `start` takes by default. */
async function trackedAtHead(repo: string, file: ConfigText): Promise<boolean> {
  try {
    const blob = await blobAtBase(repo, await headSha(repo), REPO_CONFIG_NAME)
    return blob !== null && gitObjectId('blob', file.bytes, blob) === blob
  } catch (error) {
    if (isPairLoopError(error, 'git_error')) return false // no commit yet: nothing is tracked
    throw error
  }
}
