#!/usr/bin/env node
// pr-check: its flags, read into options for lib/commands/pr-check.ts (one tick of the PR phase).
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as prCheck from '../lib/commands/pr-check.ts'
import { fail } from '../lib/ground/errors.ts'

/** A date and time with its zone (Z or ±hh:mm), as GitHub and the snapshot write them. */
const isIsoTime = (text: string) =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))

const prCheckScript = defineScript({
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
    'snapshot-out': {
      type: 'string',
      description: 'also write the snapshot the tick read to this file',
      valueHint: 'file',
    },
    'page-size': { type: 'string', description: 'page size of each GitHub query (1-100, default 100)', valueHint: 'N' },
    timeout: { type: 'string', description: 'time limit of each gh call, in seconds (default 60)', valueHint: 'S' },
    now: { type: 'string', description: "the tick's time, ISO 8601 (tests, replays)", valueHint: 'ISO' },
    'dry-run': {
      type: 'boolean',
      description: 'decide and print, record nothing (no tick counted, the backoff as it was); --text implies it',
    },
    record: { type: 'boolean', description: 'with --text: record the tick all the same (a tick a person runs)' },
  },
  async run(args, _io, ctx) {
    // a person looking (--text) does not move the agent's backoff, unless they say so
    const asText = (args as Record<string, unknown>).text === true
    if (args.record && args['dry-run'])
      fail('usage', '--record and --dry-run contradict each other', { flag: '--record' })
    const pageSize = integerFlag(args['page-size'], 'page-size', { min: 1, max: 100 })
    const timeoutS = integerFlag(args.timeout, 'timeout', { min: 1, max: 3600 })
    if (args.now !== undefined && !isIsoTime(args.now))
      fail('usage', `--now must be an ISO 8601 time such as 2026-01-10T10:00:00Z, got ${JSON.stringify(args.now)}`, {
        flag: '--now',
      })
    return prCheck.run(ctx, {
      run: args.run,
      cwd: args.cwd,
      snapshotIn: args['snapshot-in'],
      snapshotOut: args['snapshot-out'],
      pageSize,
      timeoutS,
      now: args.now === undefined ? undefined : new Date(args.now).toISOString(),
      dryRun: args['dry-run'] === true || (asText && args.record !== true),
    })
  },
})

export default prCheckScript
if (isMain(import.meta)) void main(prCheckScript)
