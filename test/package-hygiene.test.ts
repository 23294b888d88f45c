// What the package carries and leaves: `npm pack`'s tarball is git-ignored, the stub reviewers' README (shipped)
// names no file that is not in the package, and every file a package.json script runs exists.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, posix } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './_helpers.ts'

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string
  version: string
  scripts: Record<string, string>
}

/** The words of a script's command line that name a file or folder of the repository: a path, or a name with an extension. */
function pathsIn(command: string): string[] {
  return command
    .split(/\s+|&&|\|\||;/)
    .filter((word) => word && !word.startsWith('-') && !/^\d+$/.test(word) && word !== '.')
    .filter((word) => word.includes('/') || /\.(?:[cm]?[jt]s|json|sh|toml)$/.test(word))
}

/** The files `npm pack` puts in the tarball, as npm itself lists them (nothing is written). */
function packedFiles(): string[] {
  const out = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  })
  expect(out.status, out.stderr).toBe(0)
  return (JSON.parse(out.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path)
}

describe('the package', () => {
  it('runs only files that exist from its package.json scripts', () => {
    const named = Object.entries(PACKAGE.scripts).flatMap(([script, command]) =>
      pathsIn(command).map((path) => ({ script, path })),
    )
    // every bench script names its file (the words are read), and so do the e2e scripts
    const benches = Object.keys(PACKAGE.scripts).filter((script) => script.startsWith('bench:'))
    expect(benches.length).toBeGreaterThan(0)
    for (const script of [...benches, 'test:e2e']) expect(named.map((n) => n.script)).toContain(script)
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path)))).toEqual([])
  })

  // `npm install -g .` runs prepare in the clone again: a rebuild there swaps dist/ under whatever runs from it
  it('leaves an up-to-date dist/ alone when prepare runs again', () => {
    const built = join(ROOT, 'dist', 'pair-loop.cjs')
    const before = statSync(built).mtimeMs
    const out = spawnSync(process.execPath, [join(ROOT, 'bin', 'prepare.cjs')], { cwd: ROOT, encoding: 'utf8' })
    expect(out.status, out.stderr).toBe(0)
    expect(statSync(built).mtimeMs).toBe(before)
  })

  it("git-ignores npm pack's tarball", () => {
    const tarball = `${PACKAGE.name}-${PACKAGE.version}.tgz`
    const out = spawnSync('git', ['check-ignore', '--no-index', '-q', tarball], { cwd: ROOT })
    expect(out.status, `${tarball} is ignored`).toBe(0)
  })

  it('ships a stub reviewers README that names only files the package has', () => {
    const folder = 'fixtures/reviewers'
    const readme = readFileSync(join(ROOT, folder, 'README.md'), 'utf8')
    const files = packedFiles()
    expect(files).toContain(`${folder}/README.md`)
    const links = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]!).filter((to) => !/^\w+:/.test(to))
    const named = [...readme.matchAll(/`([\w./-]+\.(?:md|sh|ts|mjs|js|json))`/g)].map((m) => m[1]!)
    expect(named.length, 'the README names its stubs').toBeGreaterThan(10)
    // a name that is a file somewhere (beside the README, in the source repository, or past it) must be shipped;
    // one that is nowhere is an example (a finding's `src/a.ts`)
    const refersToAFile = (target: string) =>
      existsSync(join(ROOT, folder, target)) || existsSync(join(ROOT, target)) || target.startsWith('../')
    for (const target of [...links, ...named].filter(refersToAFile)) {
      const path = posix.normalize(posix.join(folder, target))
      expect(files, `${target} (${path}) is in the package`).toContain(path)
    }
  })
})
