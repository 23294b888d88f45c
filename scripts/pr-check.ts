#!/usr/bin/env node
// pr-check: the PR phase's one read-side step (a tick): collect the PR, decide, record it on the run, print the result.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { prTick } from '../lib/pr/tick.ts'
import { configOf, nowIso, resolveRun } from '../lib/run-access.ts'

const prCheck = defineScript({
  name: 'pr-check',
  description:
    "One tick of the PR phase: read the run's PR (CI, review threads, comments, reviews, a review bot's verdict) and say whether to keep going, stop (ready for a person to merge), or escalate.",
  args: {
    ...runArgs,
    'snapshot-in': {
      type: 'string',
      description: 'replay a captured snapshot file instead of reading GitHub (tests, debugging)',
      valueHint: 'file',
    },
  },
  async run(args) {
    const run = resolveRun(args, { allowFinished: true })
    return prTick(run, { config: configOf(run), snapshotIn: args['snapshot-in'], cwd: args.cwd, now: nowIso })
  },
})

export default prCheck
if (isMain(import.meta)) void main(prCheck)
