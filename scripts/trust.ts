#!/usr/bin/env node
// trust: the person trusts this repository's .pair-loop.json, by its exact content, so keys that run a program or
// move money are honoured from it; --show says where things stand, --revoke takes the trust back.
import { defineScript, isMain, main } from '../lib/cli.ts'
import { keysNeedingTrust, readConfig, REPO_CONFIG_NAME } from '../lib/config.ts'
import { fail } from '../lib/errors.ts'
import { topLevel } from '../lib/git.ts'
import { configPath } from '../lib/paths.ts'
import { setTrust, trustedSha } from '../lib/trust.ts'
import { join } from 'node:path'

const trust = defineScript({
  name: 'trust',
  description: "Trust this repository's .pair-loop.json as it is now, so its reviewer command and prices apply.",
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
    const recorded = trustedSha(path)
    if (!file && !args.revoke && !args.show) {
      fail('usage', `${path} does not exist: there is nothing to trust`, { path })
    }
    const keys = file ? keysNeedingTrust(file.parsed, readConfig(configPath())?.parsed) : []
    const document = (trusted: boolean, changed: boolean) => ({
      path,
      sha256: file?.sha256 ?? null,
      trusted,
      trusted_keys: trusted ? keys : [],
      keys_needing_trust: keys,
      changed,
    })
    if (args.show) return document(file !== undefined && recorded === file.sha256, false)
    if (args.revoke) return document(false, await setTrust(path, null))
    return document(true, await setTrust(path, file!.sha256))
  },
})

export default trust
if (isMain(import.meta)) void main(trust)
