// install-skill: where each agent reads skills (user and project level), idempotence, usage errors,
// and a SKILL.md both agents can load (frontmatter with name and description).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { listFiles, parseFrontmatter, skillSource } from '../lib/ground/skills.ts'
import { ROOT, git, isolatedEnv, makeRepo, runCli, tempDir } from './_helpers.ts'
import { expectError, expectOk } from './_expect.ts'

const SOURCE = join(ROOT, 'skills', 'pair-loop')
const SOURCE_FILES = listFiles(SOURCE)

function setup(extraEnv: Record<string, string> = {}) {
  const env = isolatedEnv(extraEnv)
  const repo = makeRepo({ 'README.md': '# app\n', 'src/index.ts': 'export {}\n' })
  const cli = (args: string[], cwd = repo) => runCli(['install-skill', ...args], { cwd, env })
  return { env, repo, cli }
}

/** The installed folder holds exactly the skill's files, byte for byte, and no temp files. */
function expectSameSkill(dir: string): void {
  expect(listFiles(dir)).toEqual(SOURCE_FILES)
  for (const file of SOURCE_FILES)
    expect(readFileSync(join(dir, file)).equals(readFileSync(join(SOURCE, file))), file).toBe(true)
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [e.name]))
  expect(walk(dir).filter((name) => name.endsWith('.tmp'))).toEqual([])
}

describe('the skill source', () => {
  it('has SKILL.md and references/contract.md', () => {
    expect(SOURCE_FILES).toContain('SKILL.md')
    expect(SOURCE_FILES).toContain('references/contract.md')
  })

  it('is found from lib/ (bun, deno) and from dist/ or dist/shared/ (node, after npm pack)', () => {
    expect(skillSource()).toBe(SOURCE)
    expect(skillSource(pathToFileURL(join(ROOT, 'dist', 'install-skill.cjs')).href)).toBe(SOURCE)
    expect(skillSource(pathToFileURL(join(ROOT, 'dist', 'shared', 'pair-loop.abc123.cjs')).href)).toBe(SOURCE)
    expect(skillSource(pathToFileURL(join(ROOT, 'scripts', 'install-skill.ts')).href)).toBe(SOURCE)
  })

  it('is an internal error, not a silent pass, when the package has no skill', () => {
    const lonely = tempDir('pl-nopkg-')
    expect(() => skillSource(pathToFileURL(join(lonely, 'dist', 'x.cjs')).href)).toThrow(
      /cannot find skills\/pair-loop\/SKILL.md/,
    )
  })
})

describe('SKILL.md frontmatter', () => {
  it('has the name and description Claude Code and Codex require', () => {
    const fields = parseFrontmatter(readFileSync(join(SOURCE, 'SKILL.md'), 'utf8'))
    expect(fields).not.toBeNull()
    expect(fields!.name).toBe('pair-loop') // matches the folder name
    expect(fields!.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
    expect(fields!.name!.length).toBeLessThanOrEqual(64)
    expect(fields!.description!.length).toBeGreaterThan(40)
    expect(fields!.description!.length).toBeLessThanOrEqual(1024) // both agents cap descriptions at 1024 characters
    expect(fields!.description).toMatch(/\bUse when\b/) // says when to use it: that is how an agent picks a skill
    expect(fields!.description).not.toMatch(/: |\s#/) // stays a plain YAML scalar for every parser
  })

  it('parseFrontmatter rejects a file without frontmatter and reads quoted values', () => {
    expect(parseFrontmatter('# no frontmatter\n')).toBeNull()
    expect(parseFrontmatter('---\nname: "x"\ndescription: \'y z\'\n---\nbody\n')).toEqual({
      name: 'x',
      description: 'y z',
    })
  })
})

describe('pair-loop install-skill --claude', () => {
  it('installs into $CLAUDE_CONFIG_DIR/skills/pair-loop, then reports the same paths unchanged', async () => {
    const { env, cli } = setup()
    const dir = join(env.CLAUDE_CONFIG_DIR!, 'skills', 'pair-loop')
    const first = expectOk(await cli(['--claude']))
    expect(first).toMatchObject({ agent: 'claude', scope: 'user', skill_dir: dir, changed: true, removed: [] })
    expect(first.installed).toEqual(SOURCE_FILES.map((file) => join(dir, file)).sort())
    expect(first.updated).toEqual(first.installed)
    expectSameSkill(dir)

    const second = expectOk(await cli(['--claude']))
    expect(second).toMatchObject({
      skill_dir: dir,
      installed: first.installed,
      updated: [],
      removed: [],
      changed: false,
    })
  })

  it('defaults to ~/.claude/skills when CLAUDE_CONFIG_DIR is not set', async () => {
    const { env, repo } = setup()
    const { CLAUDE_CONFIG_DIR: _unset, ...rest } = env
    const doc = expectOk(await runCli(['install-skill', '--claude'], { cwd: repo, env: rest }))
    expect(doc.skill_dir).toBe(join(env.HOME, '.claude', 'skills', 'pair-loop'))
    expectSameSkill(doc.skill_dir)
  })

  it('--project installs at the repository top level, from any folder inside it', async () => {
    const { env, repo, cli } = setup()
    const doc = expectOk(await cli(['--claude', '--project'], join(repo, 'src')))
    const dir = join(repo, '.claude', 'skills', 'pair-loop')
    expect(doc).toMatchObject({ agent: 'claude', scope: 'project', skill_dir: dir, changed: true })
    expectSameSkill(dir)
    expect(existsSync(join(env.CLAUDE_CONFIG_DIR!, 'skills'))).toBe(false) // the user level is untouched
    expect(expectOk(await cli(['--claude', '--project'])).changed).toBe(false)
  })

  it('--cwd chooses the repository', async () => {
    const { cli, repo } = setup()
    const elsewhere = tempDir('pl-elsewhere-')
    const doc = expectOk(await cli(['--claude', '--project', '--cwd', repo], elsewhere))
    expect(doc.skill_dir).toBe(join(repo, '.claude', 'skills', 'pair-loop'))
  })
})

describe('pair-loop install-skill --codex', () => {
  it('installs into ~/.agents/skills/pair-loop (not $CODEX_HOME), idempotently', async () => {
    const { env, cli } = setup()
    const dir = join(env.HOME, '.agents', 'skills', 'pair-loop')
    const first = expectOk(await cli(['--codex']))
    expect(first).toMatchObject({ agent: 'codex', scope: 'user', skill_dir: dir, changed: true })
    expectSameSkill(dir)
    expect(existsSync(join(env.CODEX_HOME!, 'skills'))).toBe(false)
    const second = expectOk(await cli(['--codex']))
    expect(second).toMatchObject({ installed: first.installed, updated: [], changed: false })
  })

  it('--project installs into <repo>/.agents/skills/pair-loop', async () => {
    const { repo, cli } = setup()
    const doc = expectOk(await cli(['--codex', '--project'], join(repo, 'src')))
    const dir = join(repo, '.agents', 'skills', 'pair-loop')
    expect(doc).toMatchObject({ agent: 'codex', scope: 'project', skill_dir: dir, changed: true })
    expectSameSkill(dir)
  })

  it('repairs an edited file and removes what an older version left behind', async () => {
    const { env, cli } = setup()
    const dir = join(env.HOME, '.agents', 'skills', 'pair-loop')
    expectOk(await cli(['--codex']))
    writeFileSync(join(dir, 'SKILL.md'), 'edited by hand\n')
    mkdirSync(join(dir, 'references', 'old'), { recursive: true })
    writeFileSync(join(dir, 'references', 'old', 'helper.md'), 'stale\n')
    const doc = expectOk(await cli(['--codex']))
    expect(doc).toMatchObject({
      changed: true,
      updated: [join(dir, 'SKILL.md')],
      removed: [join(dir, 'references', 'old', 'helper.md')],
    })
    expectSameSkill(dir)
    expect(existsSync(join(dir, 'references', 'old'))).toBe(false)
  })
})

describe('the installed SKILL.md', () => {
  it('parses for both agents at both levels', async () => {
    const { cli } = setup()
    for (const args of [['--claude'], ['--claude', '--project'], ['--codex'], ['--codex', '--project']]) {
      const doc = expectOk(await cli(args))
      const fields = parseFrontmatter(readFileSync(join(doc.skill_dir, 'SKILL.md'), 'utf8'))
      expect(fields, args.join(' ')).toMatchObject({ name: 'pair-loop' })
      expect(fields!.description, args.join(' ')).toBeTruthy()
    }
  })
})

describe('install-skill usage', () => {
  const cases: Array<[string, string[]]> = [
    ['neither agent', []],
    ['both agents', ['--claude', '--codex']],
    ['only --project', ['--project']],
    ['--commit without --project', ['--claude', '--commit']],
    ['an unknown flag', ['--claude', '--global']],
    ['a value on a switch', ['--claude=yes']],
    ['a positional argument', ['--codex', 'somewhere']],
  ]
  for (const [name, args] of cases) {
    it(`${name} is usage and installs nothing`, async () => {
      const { env, repo, cli } = setup()
      expectError(await cli(args), 'usage')
      expect(existsSync(join(env.CLAUDE_CONFIG_DIR!, 'skills'))).toBe(false)
      expect(existsSync(join(env.HOME, '.agents'))).toBe(false)
      expect(existsSync(join(repo, '.claude'))).toBe(false)
      expect(existsSync(join(repo, '.agents'))).toBe(false)
    })
  }

  it('--project outside a git repository is git_error', async () => {
    const { cli } = setup()
    expectError(await cli(['--codex', '--project'], tempDir('pl-norepo-')), 'git_error')
  })
})

describe('install-skill --project and the repository', () => {
  const excludeLines = (repo: string) => readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8').split('\n')

  for (const [agent, folder] of [
    ['--claude', '.claude/skills/pair-loop'],
    ['--codex', '.agents/skills/pair-loop'],
  ] as const) {
    it(`${agent} --project lists ${folder}/ in .git/info/exclude, so start works right after`, async () => {
      const { env, repo, cli } = setup()
      const doc = expectOk(await cli([agent, '--project']))
      expect(doc).toMatchObject({ excluded: true, exclude_file: join(repo, '.git', 'info', 'exclude') })
      expect(excludeLines(repo)).toContain(`/${folder}/`)
      expect(git(repo, ['status', '--porcelain', '--untracked-files=all'])).toBe('')
      expect(git(repo, ['ls-files'])).not.toContain(folder) // excluded, never added
      expectOk(await runCli(['start', '--task', 'x'], { cwd: repo, env }))
      // again: the line is there once
      expectOk(await cli([agent, '--project']))
      expect(excludeLines(repo).filter((line) => line === `/${folder}/`)).toHaveLength(1)
    })
  }

  it('--commit leaves it for the person to commit (start sees it until then) and takes out an earlier exclude', async () => {
    const { env, repo, cli } = setup()
    expectOk(await cli(['--claude', '--project']))
    const doc = expectOk(await cli(['--claude', '--project', '--commit']))
    expect(doc).toMatchObject({ excluded: false, exclude_file: join(repo, '.git', 'info', 'exclude') })
    expect(excludeLines(repo)).not.toContain('/.claude/skills/pair-loop/')
    const dirty = expectError(await runCli(['start', '--task', 'x'], { cwd: repo, env }), 'dirty_tree')
    expect(dirty.paths).toContain('.claude/skills/pair-loop/SKILL.md')
    git(repo, ['add', '.claude'])
    git(repo, ['commit', '-qm', 'the pair-loop skill'])
    expectOk(await runCli(['start', '--task', 'x'], { cwd: repo, env }))
  })

  it('a user install touches no repository: excluded false, no exclude file', async () => {
    const { repo, cli } = setup()
    expect(expectOk(await cli(['--codex']))).toMatchObject({ excluded: false, exclude_file: null })
    expect(
      existsSync(join(repo, '.git', 'info', 'exclude')) && excludeLines(repo).some((l) => l.includes('skills')),
    ).toBe(false)
  })
})
