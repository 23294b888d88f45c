#!/usr/bin/env node
// trust: the person trusts this repository's .pair-loop.json, by its exact content, so keys that run a program, move
// money or decide what counts are honoured from it, and the files inside the working tree that the config's commands
// run, by theirs; --show says where things stand, --revoke takes the trust back.
import { join } from 'node:path'
import { defineScript, isMain, main } from '../lib/cli.ts'
import { blobAtBase } from '../lib/config-base.ts'
import { type ConfigText, DEFAULTS, keysNeedingTrust, readConfig, REPO_CONFIG_NAME, settingsOf } from '../lib/config.ts'
import { fail, isPairLoopError } from '../lib/errors.ts'
import { headSha, topLevel } from '../lib/git.ts'
import { gitObjectId } from '../lib/git-object-id.ts'
import { configPath } from '../lib/paths.ts'
import { configuredInTree } from '../lib/review/reviewers.ts'
import { readInTree } from '../lib/review/trusted-programs.ts'
import { setTrust, trustedPrograms, trustedSha } from '../lib/trust.ts'

const trust = defineScript({
  name: 'trust',
  description:
    "Trust this repository's .pair-loop.json as it is now, and the in-tree files its commands run, so they apply.",
  args: {
    show: { type: 'boolean', description: 'say whether the file is trusted, changing nothing' },
    revoke: { type: 'boolean', description: 'take the trust back' },
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args) {
    if (args.show && args.revoke) fail('usage', 'give --show or --revoke, not both', { flag: '--revoke' })
    const repo = await topLevel(args.cwd ?? process.cwd())
    const path = join(repo, REPO_CONFIG_NAME)
    const file = readConfig(path)
    const own = readConfig(configPath())?.parsed
    const tracked = file ? await trackedAtHead(repo, file) : true
    const keys = file ? keysNeedingTrust(file.parsed, own, { tracked }) : []
    const effective = { pair_loop: { ...DEFAULTS.pair_loop, ...own?.pair_loop, ...file?.parsed.pair_loop } }
    const programs = configuredInTree(effective, repo).map((program) => ({
      path: program,
      sha256: readInTree(program, 'a configured command').sha256,
    }))
    if (!file && programs.length === 0 && !args.revoke && !args.show) {
      fail('usage', `${path} does not exist: there is nothing to trust`, { path })
    }
    const recorded = trustedPrograms(repo)
    const matches = (program: { path: string; sha256: string }) => recorded[program.path] === program.sha256
    const document = (trusted: boolean, changed: boolean, programTrusted: typeof matches) => ({
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
    if (args.show) {
      const configTrusted = file ? trustedSha(path) === file.sha256 : programs.length > 0
      return document(configTrusted && programs.every(matches), false, matches)
    }
    if (args.revoke) return document(false, await setTrust(path, null, undefined, { repo, files: null }), () => false)
    const files = programs.length > 0 ? Object.fromEntries(programs.map((p) => [p.path, p.sha256])) : null
    return document(true, await setTrust(path, file?.sha256 ?? null, undefined, { repo, files }), () => true)
  },
})

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

export default trust
if (isMain(import.meta)) void main(trust)
