// The README's loop runs as written: each shown command, in order, in a fresh repository, prints a
// document with the same fields as the output shown under it.
import { spawnSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, ROOT, makeRepo, isolatedEnv, tempDir } from './_helpers.ts'

interface Step {
  command: string
  shown: Record<string, unknown>
}

/** The `sh` blocks of "The loop in eight commands", each with the `json` block shown under it. */
function loopSteps(): Step[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## The loop in eight commands'), readme.indexOf('## The reviewer'))
  const steps: Step[] = []
  const blocks = [...section.matchAll(/```(sh|json)\n([\s\S]*?)```/g)]
  for (let i = 0; i < blocks.length - 1; i++) {
    if (blocks[i]![1] === 'sh' && blocks[i + 1]![1] === 'json')
      steps.push({ command: blocks[i]![2]!.trim(), shown: JSON.parse(blocks[i + 1]![2]!) })
  }
  return steps
}

/** `pair-loop` on PATH, as users have it after install; a stand-in `jq` only where the real one is missing. */
function binDir(): string {
  const dir = tempDir('pl-readme-bin-')
  writeFileSync(join(dir, 'pair-loop'), `#!/bin/sh\nexec ${CLI_COMMAND.map((part) => `'${part}'`).join(' ')} "$@"\n`)
  chmodSync(join(dir, 'pair-loop'), 0o755)
  if (spawnSync('sh', ['-c', 'command -v jq']).status !== 0) {
    // jq -c '.' or jq -c '{a, b}': all the README uses
    writeFileSync(
      join(dir, 'jq'),
      `#!/usr/bin/env node\nconst f = process.argv.at(-1); let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => { const doc = JSON.parse(s); const keys = f === '.' ? null : f.replace(/[{}\\s]/g, '').split(','); console.log(JSON.stringify(keys ? Object.fromEntries(keys.map((k) => [k, doc[k]])) : doc)) })\n`,
    )
    chmodSync(join(dir, 'jq'), 0o755)
  }
  return dir
}

describe('README', () => {
  it('shows the loop as commands that run, each printing the fields shown under it', () => {
    const steps = loopSteps()
    expect(steps.map((step) => (step.command.split(' ')[0] === 'echo' ? 'reply' : step.command.split(' ')[1]))).toEqual(
      ['start', 'budget-check', 'coder-done', 'review', 'reply', 'status', 'finish'],
    )
    const repo = makeRepo({
      'sum.js':
        'export function sum(values) {\n  let total = 0\n  for (let i = 0; i < values.length - 1; i++) total += values[i]\n  return total\n}\n',
    })
    const env = { ...isolatedEnv(), PATH: `${binDir()}${delimiter}${process.env.PATH}` }
    const sh = (command: string) =>
      spawnSync('bash', ['-o', 'pipefail', '-c', command], { cwd: repo, env, encoding: 'utf8' })
    for (const step of steps) {
      if (step.command.includes(' coder-done'))
        writeFileSync(
          join(repo, 'sum.js'),
          readFileSync(join(repo, 'sum.js'), 'utf8').replace('values.length - 1', 'values.length'),
        )
      if (step.command.includes(' finish')) {
        // "After coder-done and an approving review": the round the README describes in prose
        expect(sh(`pair-loop coder-done --summary "Empty list tested"`).status).toBe(0)
        expect(sh('pair-loop review --reviewer-cmd builtin:approve').status).toBe(0)
      }
      const out = sh(step.command) // as written: the stub reviewer is a built-in one, found in any repository
      expect(out.status, `${step.command}\n${out.stderr}`).toBe(0)
      const doc = JSON.parse(out.stdout)
      expect(Object.keys(doc).sort(), step.command).toEqual(Object.keys(step.shown).sort())
      for (const key of ['next', 'verdict', 'phase', 'disposition', 'level']) {
        if (key in step.shown) expect(doc[key], `${key} of ${step.command}`).toEqual(step.shown[key])
      }
    }
  })
})
