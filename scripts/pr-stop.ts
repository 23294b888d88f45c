#!/usr/bin/env node
// pr-stop: end the watch of the run's PR (the person took it over): recorded once, and no command names pr-check next.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { expectPr, recordStop } from '../lib/pr/moves.ts'
import { changeRun, nowIso, resolveRun } from '../lib/run-access.ts'

const MAX_REASON_CHARS = 1000

const prStop = defineScript({
  name: 'pr-stop',
  description:
    "End the watch of the run's PR: the person took it over. pr-check still reads it, but names no next step.",
  args: {
    ...runArgs,
    reason: { type: 'string', description: 'why the watch ends, for the record', valueHint: 'R' },
  },
  async run(args) {
    const reason = args.reason === undefined ? null : args.reason.trim()
    if (reason !== null && (reason === '' || reason.length > MAX_REASON_CHARS))
      fail('usage', `--reason must say why, in 1 to ${MAX_REASON_CHARS} characters`, { flag: '--reason' })
    const run = resolveRun(args, { allowFinished: true })
    const pr = expectPr(run, 'pr-stop')
    const stopped = await changeRun(run.run_id, (state) => recordStop(state, { at: nowIso(), reason }))
    return { run_id: run.run_id, pr, stopped: true, at: stopped.at, reason: stopped.reason, next: null }
  },
})

export default prStop
if (isMain(import.meta)) void main(prStop)
