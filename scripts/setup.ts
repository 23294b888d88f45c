#!/usr/bin/env node
// setup: its flags, read into options for lib/commands/setup.ts (record the person's reviewer programs and folders).
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import * as setup from '../lib/commands/setup.ts'

const setupScript = defineScript({
  name: 'setup',
  description:
    "For you, once: find claude and codex on your PATH and record their absolute paths (and your agents' folders) in $PAIR_LOOP_HOME/config.json, so no run looks them up on a coder's PATH. Then pair-loop's MCP entries in your Claude Code and Codex configs, for a sandboxed coder. Asks nothing; run it again after an upgrade.",
  args: {
    'allow-temp-home': {
      type: 'boolean',
      description: 'accept a PAIR_LOOP_HOME under /tmp (for tests and the demo; a person keeps theirs in ~/.pair-loop)',
    },
    'skip-mcp': {
      type: 'boolean',
      description: 'leave your Claude Code and Codex configs alone (no pair-loop MCP entries: you add them yourself)',
    },
  },
  async run(args, _io, ctx) {
    return setup.run(ctx, { allowTempHome: args['allow-temp-home'] ?? false, skipMcp: args['skip-mcp'] ?? false })
  },
})

export default setupScript
if (isMain(import.meta)) void main(setupScript)
