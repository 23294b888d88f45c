#!/usr/bin/env node
// stop-hook: its one flag, for lib/commands/stop-hook.ts (the agent's Stop hook: its JSON on stdin, its answer out).
import { defineScript, isMain, main, runArgs } from '../lib/cli/cli.ts'
import * as stopHook from '../lib/commands/stop-hook.ts'

const stopHookScript = defineScript({
  name: 'stop-hook',
  description:
    "The Claude Code / Codex Stop hook: while this repository has an active run, send the agent back once (with the next command) when it stops with changes not handed over or a review not run. Reads the hook's JSON on stdin.",
  args: { cwd: runArgs.cwd },
  async run(args, _io, ctx) {
    return stopHook.run(ctx, { cwd: args.cwd })
  },
})

export default stopHookScript
if (isMain(import.meta)) void main(stopHookScript)
