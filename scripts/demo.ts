#!/usr/bin/env node
// demo: a whole loop in a temporary repository with the built-in stub reviewer; no keys, no network.
// Narrates each step on stderr for a person; prints the final status document.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineScript, isMain, main, runScript, textInput, type Document, type ScriptLoader } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { execOrFail } from '../lib/exec.ts'

const BUGGY =
  'export function sum(values) {\n  let total = 0\n  for (let i = 0; i < values.length - 1; i++) total += values[i]\n  return total\n}\n'
const FIXED = BUGGY.replace('values.length - 1', 'values.length')
const TEST = "import { sum } from './sum.js'\n\nconsole.assert(sum([1, 2, 3]) === 6)\n"
const TEST_FIXED = `${TEST}console.assert(sum([]) === 0)\n`

const demo = defineScript({
  name: 'demo',
  description:
    'Run a whole two-round loop in a temporary repository with the built-in stub reviewer (no keys, no network).',
  args: {},
  async run() {
    const root = mkdtempSync(join(tmpdir(), 'pair-loop-demo-'))
    const repo = join(root, 'repo')
    process.env.PAIR_LOOP_HOME = join(root, 'home') // the demo's runs never mix with the person's own
    const say = (line: string) => process.stderr.write(`${line}\n`)

    say(`pair-loop demo — a coder and a reviewer in ${repo}\n`)
    await setUpRepo(repo)
    const reviewer = JSON.stringify(demoReviewerCommand())
    const step = async (why: string, argv: string[], input?: string): Promise<Document> => {
      say(`▶ ${why}\n  $ pair-loop ${argv.map((a) => (/[\s"'[\]]/.test(a) ? `'${a}'` : a)).join(' ')}`)
      const doc = await runCommand(argv, repo, input)
      say(`  ${summarise(doc)}\n`)
      return doc
    }

    await step('Open a run on the clean tree', ['start', '--task', 'Fix the off-by-one in sum()', '--max-rounds', '3'])
    writeFileSync(join(repo, 'sum.test.js'), TEST)
    await step('Round 1: the coder adds a test and hands over', [
      'coder-done',
      '--summary',
      'Added sum.test.js for sum([1, 2, 3])',
    ])
    const first = await step('The reviewer reads the diff', ['review', '--reviewer-cmd', reviewer])
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
    const finished = await step('Close the run; the PR body carries the transcript', [
      'finish',
      '--verdict',
      'APPROVED',
    ])
    say(`Look around: ${repo}/HANDOFF.md is the conversation, ${finished.pr_body_path} the PR body.`)
    const { version: _version, ...status } = await runCommand(['status'], repo)
    return status
  },
})

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
  const candidates = ['demo-reviewer.mjs', '../demo-reviewer.mjs', 'demo-reviewer.ts'].map((name) => join(here, name))
  const path = candidates.find((candidate) => existsSync(candidate))
  if (!path) fail('internal', `the demo reviewer is missing next to ${here}`)
  const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined'
  return [process.execPath, ...(isDeno ? ['run', '-A'] : []), path]
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

async function runCommand(argv: string[], cwd: string, input?: string): Promise<Document> {
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
  const doc = JSON.parse(out) as Document
  if (exit !== 0)
    fail('internal', `demo step \`${argv.join(' ')}\` failed (exit ${exit}): ${err.trim()}`, {
      step: argv[0],
      document: doc,
    })
  return doc
}

function summarise(doc: Document): string {
  const pick = [
    'run_id',
    'round',
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
if (isMain(import.meta)) await main(demo)
