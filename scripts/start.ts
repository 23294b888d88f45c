#!/usr/bin/env node
// start: its flags, read into options for lib/commands/start.ts (open a run on a clean tree).
import { decimalFlag, defineScript, integerFlag, isMain, main } from '../lib/cli/cli.ts'
import * as start from '../lib/commands/start.ts'
import { VENDORS } from '../lib/run/vendors.ts'
import { SEVERITIES } from '../lib/run/severity-gate.ts'
import { fail } from '../lib/ground/errors.ts'

/** The task heads HANDOFF.md and the PR body: a paragraph, not a document. */
const MAX_TASK_BYTES = 8 * 1024

const startScript = defineScript({
  name: 'start',
  description: 'Open a pair-loop run in the repository here: clean tree required, HANDOFF.md created and git-excluded.',
  args: {
    task: { type: 'string', required: true, description: 'what the coder is to do (one line)' },
    coder: { type: 'enum', options: [...VENDORS], description: 'the coding agent (default from config: claude)' },
    reviewer: { type: 'enum', options: [...VENDORS], description: 'the reviewing agent (default from config: codex)' },
    'max-rounds': {
      type: 'string',
      description: 'reviewer rounds before asking the person (default 3)',
      valueHint: 'N',
    },
    'budget-usd': {
      type: 'string',
      description: 'spending limit for the run in USD (default from config)',
      valueHint: 'X',
    },
    'block-on': {
      type: 'enum',
      options: [...SEVERITIES],
      description:
        "the severity gate for this run: findings below it do not keep a round from approval; only at or below the config's pair_loop.block_on (default nit: every finding blocks)",
    },
    base: {
      type: 'string',
      description:
        "the PR's base branch or commit: the review diffs against where HEAD meets it (default: the default branch)",
      valueHint: 'rev',
    },
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args, _io, ctx) {
    const maxRounds = integerFlag(args['max-rounds'], 'max-rounds', { min: 1, max: 100 })
    const budgetUsd = decimalFlag(args['budget-usd'], 'budget-usd', { positive: true })
    const task = taskFlag(args.task)
    return start.run(ctx, {
      task,
      coder: args.coder,
      reviewer: args.reviewer,
      maxRounds,
      budgetUsd,
      blockOn: args['block-on'],
      base: args.base,
      cwd: args.cwd,
    })
  },
})

/** `--task`: not blank, at most 8 KiB. */
function taskFlag(task: string): string {
  if (!task.trim()) fail('usage', '--task needs a value', { flag: '--task' })
  const bytes = Buffer.byteLength(task)
  if (bytes > MAX_TASK_BYTES)
    fail('usage', `--task has ${bytes} bytes; the limit is ${MAX_TASK_BYTES} (8 KiB): put the detail in a file`, {
      flag: '--task',
      bytes,
      limit: MAX_TASK_BYTES,
    })
  return task
}

export default startScript
if (isMain(import.meta)) void main(startScript)
