// The README's loop runs as written: each shown command, in order, in a fresh repository, prints a
// document with the same fields as the output shown under it; then docs/report.md's commands run on the finished run.
import { spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, ROOT, makeRepo, isolatedEnv, runProcess, tempDir } from './_helpers.ts'

interface Step {
  command: string
  shown: Record<string, unknown>
}

/** The `sh` blocks of "The loop in eight commands", each with the `json` block shown under it. */
function loopSteps(): Step[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf('## The loop in eight commands')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
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
      ['start', 'budget-check', 'coder-done', 'review', 'reply', 'status', 'coder-done', 'review', 'finish'],
    )
    const repo = makeRepo({
      'sum.js':
        'export function sum(values) {\n  let total = 0\n  for (let i = 0; i < values.length - 1; i++) total += values[i]\n  return total\n}\n',
    })
    const env = { ...isolatedEnv(), PATH: `${binDir()}${delimiter}${process.env.PATH}` }
    const sh = (command: string) =>
      spawnSync('bash', ['-o', 'pipefail', '-c', command], { cwd: repo, env, encoding: 'utf8' })
    let runId = ''
    for (const step of steps) {
      if (step.command.includes(' coder-done'))
        writeFileSync(
          join(repo, 'sum.js'),
          readFileSync(join(repo, 'sum.js'), 'utf8').replace('values.length - 1', 'values.length'),
        )
      const out = sh(step.command) // as written: the stub reviewer is a built-in one, found in any repository
      expect(out.status, `${step.command}\n${out.stderr}`).toBe(0)
      const doc = JSON.parse(out.stdout)
      runId ||= doc.run_id
      expect(Object.keys(doc).sort(), step.command).toEqual(Object.keys(step.shown).sort())
      for (const key of ['next', 'verdict', 'phase', 'disposition', 'level']) {
        if (key in step.shown) expect(doc[key], `${key} of ${step.command}`).toEqual(step.shown[key])
      }
    }
    // docs/report.md's block, on the run just finished: its example run id is this run's, `--open` opens with `true`
    const report = docShBlock('docs/report.md', 'pair-loop report')
    expect(report.length).toBe(4)
    for (const line of report) {
      const command = line.replace(/--run \S+/, `--run ${runId}`).replace(/\s+#.*$/, '')
      const out = spawnSync('bash', ['-o', 'pipefail', '-c', command], {
        cwd: repo,
        env: { ...env, BROWSER: 'true' },
        encoding: 'utf8',
      })
      expect(out.status, `${command}\n${out.stderr}`).toBe(0)
      const doc = JSON.parse(out.stdout)
      expect(existsSync(doc.path), command).toBe(true)
      if (command.includes('--out ')) expect(doc.path).toBe(join(realpathSync(repo), 'review.html'))
      if (command.includes('--open')) expect(doc.opened, command).toBeTruthy()
    }
  })
})

/** The lines of a docs/ file's `sh` block that starts with `first`. */
function docShBlock(file: string, first: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].find((m) => m[1]!.startsWith(first))
  expect(block, `a ${file} sh block starting with ${first}`).toBeDefined()
  return block![1]!.trim().split('\n')
}

/** The README's first lines up to its first section: what a person reads before anything else. */
const opening = () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  return readme.slice(0, readme.indexOf('\n## '))
}

/** The lines of the README's `sh` block that starts with `first`. */
function shBlock(first: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].find((m) => m[1]!.startsWith(first))
  expect(block, `a README sh block starting with ${first}`).toBeDefined()
  return block![1]!.trim().split('\n')
}

describe('the README, the first minute', () => {
  it('opens with the two commands that set everything up: the demo, and the tests', () => {
    const first = /```sh\n([\s\S]*?)```/.exec(opening())
    expect(first?.[1]?.trim().split('\n')).toEqual(['npm ci && npx pair-loop demo', 'npm test'])
  })

  it('npx pair-loop before npm ci says in one line what to run, exit 127, instead of nothing', async () => {
    // a clone before `npm ci`: package.json and the plain-JS bin/, no node_modules, no dist/
    const clone = tempDir('pl-fresh-clone-')
    writeFileSync(join(clone, 'package.json'), readFileSync(join(ROOT, 'package.json')))
    cpSync(join(ROOT, 'bin'), join(clone, 'bin'), { recursive: true })
    const npx = opening().match(/npm ci && (npx pair-loop demo)/)![1]!
    const home = tempDir('pl-npx-home-')
    const env = {
      PATH: (process.env.PATH ?? '/usr/bin:/bin')
        .split(delimiter)
        .filter((dir) => !dir.startsWith(ROOT))
        .join(delimiter),
      HOME: home,
      TMPDIR: home,
      npm_config_cache: join(home, 'npm-cache'), // npx links the clone into its own cache: not the developer's
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    }
    const result = await runProcess(['bash', '-c', npx], { cwd: clone, env, timeoutMs: 120_000 })
    expect(result.code, result.stderr).toBe(127)
    expect(result.stdout).toBe('')
    const said = result.stderr.split('\n').filter((line) => line.startsWith('pair-loop:'))
    expect(said).toEqual([
      'pair-loop: not built yet: run `npm ci` in this clone first (it installs the dependencies and builds dist/), then `npx pair-loop demo`',
    ])
  })

  it("reads the demo's kept run with the demo's own home, as the README writes it", () => {
    const env = { ...isolatedEnv(), PATH: `${binDir()}${delimiter}${process.env.PATH}` }
    const demo = spawnSync('bash', ['-c', 'pair-loop demo --keep'], { cwd: tempDir(), env, encoding: 'utf8' })
    expect(demo.status, demo.stderr).toBe(0)
    const kept = /Kept in (\/\S+?):/.exec(demo.stderr)?.[1]
    expect(kept, demo.stderr).toBeDefined()
    const [dirLine, ...commands] = shBlock('DIR=')
    expect(dirLine).toMatch(/^DIR=\S+ +#/)
    const script = [`DIR=${kept}`, ...commands].join('\n')
    const report = spawnSync('bash', ['-o', 'pipefail', '-c', script], { cwd: tempDir(), env, encoding: 'utf8' })
    expect(report.status, report.stdout + report.stderr).toBe(0)
    const doc = JSON.parse(report.stdout)
    expect(doc.path.startsWith(join(kept!, 'home', 'reports'))).toBe(true)
    expect(existsSync(doc.path)).toBe(true)
  })
})
