#!/usr/bin/env node
// demo: a whole loop in a temporary repository with the built-in stub reviewer; no keys, no network.
// Narrates each step on stderr for a person; prints the final status document.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineScript, isMain, main, runScript, textInput, type ScriptLoader } from '../lib/cli/cli.ts'
import type { Document } from '../lib/ground/document.ts'
import { fail } from '../lib/ground/errors.ts'
import { execOrFail } from '../lib/ground/exec.ts'

const BUGGY =
  'export function sum(values) {\n  let total = 0\n  for (let i = 0; i < values.length - 1; i++) total += values[i]\n  return total\n}\n'
const FIXED = BUGGY.replace('values.length - 1', 'values.length')
const TEST = "import { sum } from './sum.js'\n\nconsole.assert(sum([1, 2, 3]) === 6)\n"
const TEST_FIXED = `${TEST}console.assert(sum([]) === 0)\n`
/** The model the stub reviewer reports its usage under (its first argument), priced at $0 in the demo's config. */
const DEMO_MODEL = 'pair-loop-demo-stub'

const demo = defineScript({
  name: 'demo',
  description: 'A whole two-round loop in a temporary repository with a stub reviewer: no keys, no network.',
  args: {
    keep: { type: 'boolean', description: 'keep the temporary repository and run files afterwards (default: removed)' },
  },
  async run(args, io) {
    const root = mkdtempSync(join(tmpdir(), 'pair-loop-demo-'))
    const repo = join(root, 'repo')
    const home = join(root, 'home')
    process.env.PAIR_LOOP_HOME = home // the demo's runs never mix with the person's own
    const say = (line: string) => io.stderr(`${line}\n`)
    try {
      say(`pair-loop demo — a coder and a reviewer in ${repo}\n`)
      await setUpRepo(repo)
      writeDemoConfig(home)
      const reviewer = JSON.stringify(demoReviewerCommand())
      const step = async (why: string, argv: string[], input?: string): Promise<Document> => {
        say(`▶ ${why}\n  $ pair-loop ${argv.map((a) => (/[\s"'[\]]/.test(a) ? `'${a}'` : a)).join(' ')}`)
        const { document, notes } = await runCommand(argv, repo, input)
        for (const note of notes) say(`  ${note}`)
        say(`  ${summarise(document)}\n`)
        return document
      }
      const finished = await playLoop(step, repo, reviewer)
      const { version: _version, ...status } = (await runCommand(['status'], repo)).document
      if (args.keep) {
        say(`Kept in ${root}: ${repo}/HANDOFF.md is the conversation, ${finished.pr_body_path} the PR body.`)
        // its run is in the demo's own home, not the person's: a plain `pair-loop report` there says run_not_found
        say(`Its run is in the demo's own home; its page: PAIR_LOOP_HOME='${home}' pair-loop report --cwd '${repo}'`)
        say(`Remove it with: rm -rf '${root}'`)
      } else say(`Removed ${root} (run \`pair-loop demo --keep\` to look around afterwards).`)
      return status
    } finally {
      if (!args.keep) rmSync(root, { recursive: true, force: true })
    }
  },
})

type Step = (why: string, argv: string[], input?: string) => Promise<Document>

/** The loop itself: a buggy sum(), a review asking for changes, replies and the fix, an approving review, finish. */
async function playLoop(step: Step, repo: string, reviewer: string): Promise<Document> {
  await step('Open a run on the clean tree', ['start', '--task', 'Fix the off-by-one in sum()', '--max-rounds', '3'])
  writeFileSync(join(repo, 'sum.test.js'), TEST)
  await step('Round 1: the coder adds a test and hands over', [
    'coder-done',
    '--summary',
    'Added sum.test.js for sum([1, 2, 3])',
  ])
  // the reviewer runs in a worker of its own: `--wait 0` comes back at once with the review in flight
  let first = await step('The reviewer reads the diff, in a worker of its own; this call does not wait', [
    'review',
    '--reviewer-cmd',
    reviewer,
    '--wait',
    '0',
  ])
  if (first.in_progress)
    first = await step('Still in flight (next: review): running review again attaches to it and waits', ['review'])
  if (first.verdict !== 'CHANGES_REQUESTED')
    fail('internal', 'the demo reviewer should have requested changes in round 1')
  await step(
    'The coder answers finding 1.1',
    ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'],
    'Right: the loop now runs to values.length.',
  )
  await step(
    '…and finding 1.2',
    ['reply', '--finding', '1.2', '--disposition', 'fixed', '--body-file', '-'],
    'Added the empty-list case.',
  )
  writeFileSync(join(repo, 'sum.js'), FIXED)
  writeFileSync(join(repo, 'sum.test.js'), TEST_FIXED)
  await step('Check the budget before the next round', ['budget-check'])
  await step('Round 2: the fix', [
    'coder-done',
    '--summary',
    'Loop bound fixed; empty list tested',
    '--findings-addressed',
    '2',
  ])
  await step('The reviewer reads the new diff', ['review', '--reviewer-cmd', reviewer])
  return step('Close the run; the PR body carries the transcript', ['finish', '--verdict', 'APPROVED'])
}

/**
 * The demo's own home config: the stub reviewer's model is priced at $0, so its reported usage is costed, not
 * "unpriced"; and the demo's person allows a `--reviewer-cmd` (the built-in stub is its reviewer).
 */
function writeDemoConfig(home: string) {
  mkdirSync(home, { recursive: true })
  const config = { pair_loop: { allow_reviewer_cmd: true }, pricing: { [DEMO_MODEL]: { input: 0, output: 0 } } }
  writeFileSync(join(home, 'config.json'), `${JSON.stringify(config, null, 2)}\n`)
}

async function setUpRepo(repo: string) {
  const git = (argv: string[]) =>
    execOrFail(
      'git',
      [
        '-c',
        'user.name=pair-loop demo',
        '-c',
        'user.email=demo@pair-loop.invalid',
        '-c',
        'commit.gpgsign=false',
        ...argv,
      ],
      { cwd: repo },
    )
  await execOrFail('git', ['init', '-q', repo], {})
  writeFileSync(join(repo, 'sum.js'), BUGGY)
  await git(['add', 'sum.js'])
  await git(['commit', '-qm', 'sum() with an off-by-one'])
}

/** The stub reviewer beside this module: built (node) or TypeScript (deno, bun), run by the same runtime. */
function demoReviewerCommand(): string[] {
  const here = fileURLToPath(new URL('.', import.meta.url))
  const candidates = ['demo-reviewer.cjs', '../demo-reviewer.cjs', 'demo-reviewer.ts'].map((name) => join(here, name))
  const path = candidates.find((candidate) => existsSync(candidate))
  if (!path) fail('internal', `the demo reviewer is missing next to ${here}`)
  const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined'
  return [process.execPath, ...(isDeno ? ['run', '-A'] : []), path, DEMO_MODEL]
}

/** The commands the demo runs, loaded by name (not through the dispatcher's table, which lists the demo itself). */
const STEPS: Record<string, ScriptLoader> = {
  start: () => import('./start.ts'),
  'coder-done': () => import('./coder-done.ts'),
  review: () => import('./review.ts'),
  reply: () => import('./reply.ts'),
  'budget-check': () => import('./budget-check.ts'),
  finish: () => import('./finish.ts'),
  status: () => import('./status.ts'),
}

/**
 * One command in process, its stderr kept: a warning is shown to the person as it is, except that the demo's coder
 * (this script, not an agent) has no transcript by design, which is said as information.
 */
async function runCommand(
  argv: string[],
  cwd: string,
  input?: string,
): Promise<{ document: Document; notes: string[] }> {
  const load = STEPS[argv[0]!]
  if (!load) fail('internal', `demo step ${argv[0]} is not a command`)
  let out = ''
  let err = ''
  const exit = await runScript((await load()).default, [...argv.slice(1), '--cwd', cwd], {
    stdin: textInput(input ?? ''),
    stdout: (text) => {
      out += text
    },
    stderr: (text) => {
      err += text
    },
  })
  const document = JSON.parse(out) as Document
  if (exit !== 0)
    fail('internal', `demo step \`${argv.join(' ')}\` failed (exit ${exit}): ${err.trim()}`, {
      step: argv[0],
      document,
    })
  const lines = err.split('\n').filter(Boolean)
  const coderMissing = (line: string) => line.includes(': warning: coder: missing:')
  const notes = lines.filter((line) => !coderMissing(line))
  if (lines.some(coderMissing))
    notes.unshift('info: coder: no transcript: demo (the coder here is this script; its cost is $0)')
  return { document, notes }
}

function summarise(doc: Document): string {
  const pick = [
    'run_id',
    'round',
    'in_progress',
    'verdict',
    'level',
    'spent',
    'finding',
    'disposition',
    'next',
    'pr_body_path',
  ].filter((key) => doc[key] !== undefined && key !== 'pr_body_path')
  const findings = Array.isArray(doc.findings)
    ? ` findings=${doc.findings.map((f: { id: string }) => f.id).join(',') || 'none'}`
    : ''
  return `→ ${pick.map((key) => `${key}=${typeof doc[key] === 'object' ? JSON.stringify(doc[key]) : doc[key]}`).join(' ')}${findings}`
}

export default demo
if (isMain(import.meta)) void main(demo)
