#!/usr/bin/env node
// pr-resolve: resolve one review thread of the run's PR, recorded only once GitHub's answer confirms it.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { resolveThread } from '../lib/pr/resolve.ts'
import { resolveRun } from '../lib/run-access.ts'

const prResolve = defineScript({
  name: 'pr-resolve',
  description: "Resolve one review thread of the run's PR and confirm it from GitHub's answer (3 attempts at most).",
  args: {
    ...runArgs,
    thread: { type: 'string', required: true, description: 'the thread id (PRRT_…) from pr-check', valueHint: 'ID' },
  },
  async run(args) {
    if (!/^[A-Za-z0-9_=-]+$/.test(args.thread))
      fail('usage', `--thread must be a GraphQL node id such as PRRT_kwDO…, got ${JSON.stringify(args.thread)}`, {
        flag: '--thread',
      })
    return resolveThread(resolveRun(args, { allowFinished: true }), args.thread)
  },
})

export default prResolve
if (isMain(import.meta)) void main(prResolve)
