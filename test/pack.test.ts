// The package as users get it. Bins: package.json maps `pair-loop` and one `pair-loop-<command>` per command, every
// dist entry has the shebang and is executable, and a command's file runs on its own, directly and through a symlink
// (npm's bin links), so isMain holds there; every command's file does so once installed (`--help` through its bin).
// Then `npm pack` → `npm install <tarball>` into an empty folder → `pair-loop codes`, `npx pair-loop-codes`,
// `npx pair-loop demo` and install-skill work with nothing else present.
// npx (~0.6 s of CPU each) runs where it is the claim: npx finds the installed dispatcher and a command's own bin;
// the rest runs the bin npm linked into node_modules/.bin, as the README runs `pair-loop install-skill`.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMANDS } from '../scripts/commands.ts'
import { ensureBuilt } from './_build.ts'
import { npmCache, packedClone, userEnv } from './_packed.ts'
import { ROOT, isBun, runProcess, tempDir, type ProcessResult } from './_helpers.ts'

const NODE = isBun ? 'node' : process.execPath
const DIST = join(ROOT, 'dist')
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string
  bin: Record<string, string>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}
const COMMAND_NAMES = Object.keys(COMMANDS)
const SHEBANG = '#!/usr/bin/env node\n'
const PACK_TIMEOUT = 300_000

type Result = ProcessResult

const run = (command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }) =>
  runProcess([command, ...args], { timeoutMs: 120_000, ...options })

const show = (result: Result) =>
  `exit ${result.code}\nstdout: ${result.stdout.slice(0, 4000)}\nstderr: ${result.stderr.slice(0, 4000)}`

const scratch: string[] = []
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

beforeAll(() => {
  ensureBuilt()
}, 180_000)

describe('bins', () => {
  it('package.json maps pair-loop-<command> for each command onto dist/, and pair-loop onto bin/, which loads dist/', () => {
    // bin/pair-loop.cjs is plain JavaScript in git: in a clone before `npm ci` it says what to run (test/readme)
    const expected: Record<string, string> = { 'pair-loop': './bin/pair-loop.cjs' }
    for (const command of COMMAND_NAMES) expected[`pair-loop-${command}`] = `./dist/${command}.cjs`
    expect(PACKAGE.bin).toEqual(expected)
  })

  it('every dist entry starts with the shebang and is executable; commands.ts is no entry', () => {
    const entries = readdirSync(DIST)
      .filter((name) => name.endsWith('.cjs'))
      .sort()
    // action: the GitHub Action's program (action.yml runs it), no bin
    expect(entries).toEqual(
      [...COMMAND_NAMES, 'pair-loop', 'demo-reviewer', 'action'].map((name) => `${name}.cjs`).sort(),
    )
    for (const name of entries) {
      const path = join(DIST, name)
      expect(readFileSync(path, 'utf8').startsWith(SHEBANG), `${name} starts with ${SHEBANG}`).toBe(true)
      expect(statSync(path).mode & 0o111, `${name} is executable`).toBe(0o111)
    }
  })

  it('zx and proper-lockfile stay external runtime dependencies; citty and valibot are bundled, tree-shaken', () => {
    const bundle = ['.', 'shared', 'chunks']
      .flatMap((dir) =>
        readdirSync(join(DIST, dir))
          .filter((name) => name.endsWith('.cjs'))
          .map((name) => readFileSync(join(DIST, dir, name), 'utf8')),
      )
      .join('\n')
    const imports = (dependency: string) => new RegExp(`(?:from |import\\(|require\\()'${dependency}(?:/[\\w-]+)?'`)
    for (const dependency of ['zx', 'proper-lockfile']) {
      expect(PACKAGE.dependencies[dependency], `${dependency} is a dependency`).toBeDefined()
      expect(bundle, `dist imports ${dependency} instead of bundling it`).toMatch(imports(dependency))
    }
    // still dependencies: Deno and Bun run the TypeScript sources, which import them
    for (const dependency of ['citty', 'valibot']) {
      expect(PACKAGE.dependencies[dependency], `${dependency} is a dependency`).toBeDefined()
      expect(bundle, `dist bundles ${dependency} (start-up: only what is used is compiled)`).not.toMatch(
        imports(dependency),
      )
    }
  })

  it('loads no two chunks of dist that require each other at load time (a cycle would read a binding before it is set)', () => {
    const files = ['.', 'shared', 'chunks'].flatMap((dir) =>
      readdirSync(join(DIST, dir))
        .filter((name) => name.endsWith('.cjs'))
        .map((name) => join(DIST, dir, name)),
    )
    // a top-level require starts a line; a lazy one (a dynamic import in the source) sits inside a function
    const requires = new Map(
      files.map((file) => [
        file,
        [...readFileSync(file, 'utf8').matchAll(/^(?:const \w+ = )?require\('(\.\.?\/[^']+)'\);$/gm)].map((m) =>
          join(file, '..', m[1]!),
        ),
      ]),
    )
    const cycles: string[] = []
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) cycles.push([...path.slice(path.indexOf(file)), file].join(' → '))
      else for (const next of requires.get(file) ?? []) visit(next, [...path, file])
    }
    for (const file of files) visit(file, [])
    expect(requires.get(join(DIST, 'budget-check.cjs'))?.length, 'the pattern finds requires').toBeGreaterThan(0)
    expect(cycles).toEqual([])
  })

  it('through a bin symlink (as npm links it): pair-loop-codes prints the codes document, pair-loop dispatches', async () => {
    const bin = tempDir('pl-bin-')
    scratch.push(bin)
    symlinkSync(join(DIST, 'codes.cjs'), join(bin, 'pair-loop-codes'))
    symlinkSync(join(DIST, 'status.cjs'), join(bin, 'pair-loop-status'))
    symlinkSync(join(DIST, 'pair-loop.cjs'), join(bin, 'pair-loop'))
    const env = userEnv({ PATH: `${bin}${delimiter}${userEnv().PATH}` })
    const direct = await run(NODE, [join(DIST, 'codes.cjs')], { cwd: bin, env })
    const linked = await run(join(bin, 'pair-loop-codes'), [], { cwd: bin, env })
    const onPath = await run('pair-loop-codes', [], { cwd: bin, env })
    const dispatched = await run('pair-loop', ['codes'], { cwd: bin, env })
    for (const result of [direct, linked, onPath, dispatched]) expect(result.code, show(result)).toBe(0)
    const document = JSON.parse(direct.stdout)
    expect(document.version).toBe(1)
    expect(document.codes.map((c: { code: string }) => c.code)).toContain('usage')
    expect(linked.stdout).toBe(direct.stdout)
    expect(onPath.stdout).toBe(direct.stdout)
    expect(dispatched.stdout).toBe(direct.stdout)
    // a linked command still speaks the error contract (and runs once: one document)
    const usage = await run('pair-loop-status', ['--bogus'], { cwd: bin, env })
    expect(usage.code, show(usage)).toBe(2)
    expect(usage.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(usage.stdout).errors[0].code).toBe('usage')
  })
})

describe('npm pack → install into an empty folder → run', () => {
  let tarball = ''
  let files: string[] = []
  let app = ''
  let home = ''
  let cache = ''

  beforeAll(async () => {
    const work = tempDir('pl-pack-')
    scratch.push(work)
    app = join(work, 'app')
    home = join(work, 'home')
    for (const dir of [app, home]) mkdirSync(dir)
    // `npm pack` of the clone with its scripts not run (`prepare` would rebuild dist/ under the feet of tests running
    // beside this one; ensureBuilt() has just made sure dist/ is fresh, and that dist/ is what gets packed), once per
    // run: test/readme-person.test.ts installs the same tarball (test/_packed.ts). Its files are read from it.
    const [packed, npmCacheDir] = await Promise.all([packedClone(), npmCache()])
    tarball = packed.tarball
    files = packed.files
    cache = npmCacheDir
    // the dependencies come from the registry or npm's cache, as for any user
    const install = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball],
      { cwd: app, env: userEnv(), timeoutMs: 240_000 },
    )
    if (install.code !== 0) throw new Error(`npm install ${tarball} failed: ${show(install)}`)
  }, PACK_TIMEOUT)

  /** A user's shell in the install folder, with a HOME and TMPDIR of its own and npm's cache (asked once) for npx. */
  const npxEnv = () =>
    userEnv({
      HOME: home,
      TMPDIR: home,
      PAIR_LOOP_HOME: join(home, '.pair-loop'),
      ...(cache ? { npm_config_cache: cache } : {}),
    })
  const npx = (args: string[]) => run('npx', ['--no', ...args], { cwd: app, env: npxEnv() })
  /** An installed bin run as npm linked it (node_modules/.bin), in the same shell as npx. */
  const installed = (bin: string, args: string[]) =>
    run(join(app, 'node_modules', '.bin', bin), args, { cwd: app, env: npxEnv() })

  it('the tarball holds dist, the skill and the stub reviewers, and no sources or tests', () => {
    expect(existsSync(tarball)).toBe(true)
    for (const target of Object.values(PACKAGE.bin)) expect(files).toContain(target.replace(/^\.\//, ''))
    expect(files).toContain('dist/demo-reviewer.cjs')
    expect(files).toContain('skills/pair-loop/SKILL.md')
    // README's links into docs/ resolve in the package too (docs/reference/, notes on other tools, stays out)
    for (const doc of readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')))
      expect(files).toContain(`docs/${doc}`)
    expect(files.filter((file) => file.startsWith('docs/reference/'))).toEqual([])
    expect(files).toContain('fixtures/reviewers/approve.sh')
    expect(files.filter((file) => /^(?:lib|scripts|test)\//.test(file) || file.endsWith('.ts'))).toEqual([])
  })

  it('installs with only the runtime dependencies, and links every bin', () => {
    const installed = readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'))
    // a scoped one (@modelcontextprotocol/sdk) is a folder in its scope's
    for (const dependency of [PACKAGE.name, ...Object.keys(PACKAGE.dependencies)])
      expect(existsSync(join(app, 'node_modules', dependency)), dependency).toBe(true)
    // a devDependency may still come as a runtime dependency's own (ajv: the MCP SDK's)
    const ofRuntime = new Set(
      Object.keys(PACKAGE.dependencies).flatMap((name) =>
        Object.keys(
          JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')).dependencies ?? {},
        ),
      ),
    )
    for (const dev of Object.keys(PACKAGE.devDependencies).filter((name) => !ofRuntime.has(name)))
      expect(installed, `devDependency ${dev} installed`).not.toContain(dev.split('/')[0])
    for (const bin of Object.keys(PACKAGE.bin)) {
      const link = join(app, 'node_modules', '.bin', bin)
      expect(lstatSync(link).isSymbolicLink(), `${bin} is linked`).toBe(true)
      expect(realpathSync(link)).toBe(realpathSync(join(app, 'node_modules', PACKAGE.name, PACKAGE.bin[bin]!)))
    }
  })

  it('pair-loop codes (the installed dispatcher) and npx pair-loop-codes print the codes document', async () => {
    const viaDispatcher = await installed('pair-loop', ['codes'])
    const viaBin = await npx(['pair-loop-codes'])
    for (const result of [viaDispatcher, viaBin]) expect(result.code, show(result)).toBe(0)
    const document = JSON.parse(viaDispatcher.stdout)
    expect(document.version).toBe(1)
    expect(document.codes.length).toBeGreaterThan(5)
    expect(viaBin.stdout).toBe(viaDispatcher.stdout)
  }, 60_000)

  it('npx pair-loop demo runs a whole loop: exit 0, the final status with phase finished and verdict APPROVED', async () => {
    const result = await npx(['pair-loop', 'demo'])
    expect(result.code, show(result)).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(result.stdout)).toMatchObject({
      phase: 'finished',
      round: 2,
      next: null,
      outcome: { verdict: 'APPROVED' },
    })
  }, 120_000)

  it('every installed bin answers --help', async () => {
    for (const bin of Object.keys(PACKAGE.bin).filter((name) => name !== 'pair-loop')) {
      const result = await installed(bin, ['--help'])
      expect(result.code, `${bin}: ${show(result)}`).toBe(0)
      expect(result.stdout).toContain(`pair-loop ${bin.slice('pair-loop-'.length)}`)
      expect(result.stderr, bin).toBe('')
    }
  }, 120_000)

  it('install-skill finds the packaged skill', async () => {
    for (const agent of ['--claude', '--codex']) {
      const result = await installed('pair-loop', ['install-skill', agent]) // the README's `pair-loop install-skill`
      expect(result.code, show(result)).toBe(0)
    }
    expect(existsSync(join(home, '.claude', 'skills', 'pair-loop', 'SKILL.md'))).toBe(true)
    expect(existsSync(join(home, '.agents', 'skills', 'pair-loop', 'SKILL.md'))).toBe(true)
  }, 60_000)
})
