// The README's "How you use it" runs as written, for a person with a HOME of their own: pair-loop installed from the
// clone (linked) and from its packed tarball into a prefix of their own, npx from the clone, the skill installed, and
// the commands to watch a run. Only `npm ci` is not run: this checkout is what it leaves (node_modules, dist/ built).
// `npm pack` runs once per test run for this file and test/pack.test.ts (test/_packed.ts): in the clone, as written,
// its tarball then copied to where the next step installs it from.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, lstatSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './_build.ts'
import { PACK_COMMAND, npmCache, packedClone } from './_packed.ts'
import { ROOT, isolatedEnv, makeRepo, tempDir } from './_helpers.ts'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string }

interface Step {
  command: string
  /** What the README's comment on the line says, if anything. */
  comment: string
}

/** The command lines of the `sh` blocks of "How you use it", in order, each with its comment. */
function personSteps(): Step[] {
  const start = README.indexOf('## How you use it')
  const section = README.slice(start, README.indexOf('\n## ', start + 1))
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => {
        const at = line.indexOf(' #')
        return at === -1
          ? { command: line.trim(), comment: '' }
          : { command: line.slice(0, at).trim(), comment: line.slice(at + 2).trim() }
      }),
  )
}

describe('README: How you use it', () => {
  beforeAll(() => ensureBuilt(), 180_000)

  it('never tells anyone to install pair-loop from the npm registry, where it is not', () => {
    for (const file of ['README.md', 'skills/pair-loop/SKILL.md', 'skills/pair-loop/references/contract.md']) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      expect(text, file).not.toMatch(/npm (?:i|install)(?: -g| --global)? pair-loop(?![\w.-])/)
    }
  })

  it('runs every step as written, in a HOME and an npm prefix of its own', async () => {
    const steps = personSteps()
    expect(steps.map((step) => step.command)).toEqual(
      expect.arrayContaining([
        'npm ci',
        'npm install -g .',
        'npm pack',
        `npm install -g ./${PACKAGE.name}-${PACKAGE.version}.tgz`,
        'npx pair-loop demo',
        'pair-loop install-skill --claude',
        'pair-loop install-skill --codex',
        'pair-loop status --text',
      ]),
    )
    const prefix = tempDir('pl-prefix-')
    const packed = tempDir('pl-packed-')
    const env = isolatedEnv()
    const cache = await npmCache()
    const shell = {
      ...env,
      PATH: `${join(prefix, 'bin')}${delimiter}${env.PATH}`,
      npm_config_prefix: prefix,
      npm_config_ignore_scripts: 'true', // `prepare` would rebuild dist/ under the feet of the tests beside this one
      npm_config_cache: cache,
      npm_config_prefer_offline: 'true', // the dependencies from npm's cache where it has them, as pack.test.ts does
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    }
    // the person watches a run their agent opened: a round reviewed, findings open
    const repo = makeRepo({ 'sum.js': 'export const sum = (xs) => xs.reduce((a, b) => a + b, 1)\n' })
    const agent = (args: string) => {
      const out = spawnSync('bash', ['-c', `pair-loop ${args}`], { cwd: repo, env: shell, encoding: 'utf8' })
      expect(out.status, `${args}: ${out.stderr}`).toBe(0)
    }
    for (const { command, comment } of steps) {
      if (command === 'npm ci') continue // this checkout is what `npm ci` leaves: see the top of the file
      // the README's DIR=… names a folder the demo printed: the one `demo --keep` printed here is used instead
      if (command.startsWith('DIR=')) continue
      if (command === PACK_COMMAND) {
        // packed once for the run, scripts not run (test/_packed.ts); the tarball lands where the next step installs it
        const tarball = await packedClone()
        expect(comment, 'the README names the file npm pack writes').toContain(tarball.filename)
        copyFileSync(tarball.tarball, join(packed, tarball.filename))
        continue
      }
      const where = command.startsWith('npm install -g ./')
        ? packed
        : /^(npm|npx) /.test(command)
          ? ROOT // the clone
          : repo
      if (command === 'pair-loop status --text') {
        agent("start --task 'Fix sum()'")
        writeFileSync(join(repo, 'sum.js'), 'export const sum = (xs) => xs.reduce((a, b) => a + b, 0)\n') // the fix
        agent("coder-done --summary 'first pass'")
        agent('review --reviewer-cmd builtin:changes')
      }
      // the test's HOME is a temporary folder (removed with the test, as the bar asks), which setup refuses for a
      // person's PAIR_LOOP_HOME: the run says it is a test's with --allow-temp-home; the README shows what a person types
      const run = command === 'pair-loop setup' ? `${command} --allow-temp-home` : command
      const out = spawnSync('bash', ['-o', 'pipefail', '-c', run], {
        cwd: where,
        env: shell,
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(out.status, `${command}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`).toBe(0)
      const kept = /Kept in (\S+?):/.exec(out.stderr)?.[1] // under the test's TMPDIR: removed with it
      if (kept) Object.assign(shell, { DIR: kept })
      if (command === 'pair-loop --version') {
        expect(JSON.parse(out.stdout)).toEqual({ version: 1, pair_loop: PACKAGE.version })
        expect(JSON.parse(comment), 'the README shows the version it is').toEqual(JSON.parse(out.stdout))
      }
      if (command === 'npm install -g .')
        expect(realpathSync(join(prefix, 'bin', 'pair-loop'))).toBe(join(ROOT, 'bin', 'pair-loop.cjs'))
      if (command.startsWith('npm install -g ./')) {
        const installed = join(prefix, 'lib', 'node_modules', PACKAGE.name)
        expect(lstatSync(installed).isSymbolicLink(), 'the tarball is installed, not linked').toBe(false)
        expect(realpathSync(join(prefix, 'bin', 'pair-loop'))).toBe(join(installed, 'bin', 'pair-loop.cjs'))
      }
      if (command === 'pair-loop setup') {
        const config = JSON.parse(readFileSync(join(env.HOME, '.pair-loop', 'config.json'), 'utf8'))
        const setup = JSON.parse(out.stdout)
        expect(Object.keys(setup.recorded), 'the README shows what it records').toEqual(
          expect.arrayContaining(['claude_bin', 'codex_bin']),
        )
        for (const key of ['claude_bin', 'codex_bin'] as const)
          expect(config.pair_loop?.[key] ?? null, `${key} in ~/.pair-loop/config.json`).toBe(setup.recorded[key])
      }
      if (command === 'npx pair-loop demo') expect(JSON.parse(out.stdout)).toMatchObject({ phase: 'finished' })
      if (command === 'pair-loop install-skill --claude')
        expect(existsSync(join(env.HOME, '.claude', 'skills', 'pair-loop', 'SKILL.md'))).toBe(true)
      if (command === 'pair-loop install-skill --codex')
        expect(existsSync(join(env.HOME, '.agents', 'skills', 'pair-loop', 'SKILL.md'))).toBe(true)
      if (command.endsWith('--text')) expect(() => JSON.parse(out.stdout), `${command} prints text`).toThrow()
      if (command === 'pair-loop status --text') expect(out.stdout).toMatch(/^open findings$/m)
    }
  }, 300_000)
})
