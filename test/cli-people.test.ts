// The CLI for a person: --version, --help with what each command does, "did you mean" for a mistyped command, flag
// or config key, and config and git messages in the person's words, never a library's own text.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'citty'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { ConfigFile, REPO_CONFIG_NAME } from '../lib/run/config.ts'
import { runScript, textInput } from '../lib/cli/cli.ts'
import { parseFlags, withCommonArgs } from '../lib/cli/flags.ts'
import { COMMANDS } from '../scripts/commands.ts'
import { ROOT, git, isolatedEnv, runCli, sandbox, tempDir } from './_helpers.ts'
import { expectError } from './_expect.ts'

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }

describe('pair-loop --version', () => {
  it('prints {"version":1,"pair_loop":"<the version in package.json>"}, and the bare version with --text', async () => {
    const sb = sandbox()
    const json = await sb.cli(['--version'])
    expect(json.code).toBe(0)
    expect(json.stdout).toBe(`${JSON.stringify({ version: 1, pair_loop: PACKAGE.version })}\n`)
    expect(json.stderr).toBe('')
    const text = await sb.cli(['--version', '--text'])
    expect(text.stdout).toBe(`pair-loop ${PACKAGE.version}\n`)
  })
})

describe('pair-loop --help', () => {
  it('lists every command with its one-line description, and the common flags', async () => {
    const result = await sandbox().cli(['--help'])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    // a description too long for its line goes on under itself: join a command's lines back into one
    const entries = result.stdout.split(/\n(?! {3,})/).map((entry) => entry.replace(/\n +/g, ' '))
    for (const [name, load] of Object.entries(COMMANDS)) {
      const { description } = (await load()).default
      expect(description.includes('\n'), `${name}'s description is one line`).toBe(false)
      expect(entries, `${name} and what it does`).toContainEqual(expect.stringMatching(new RegExp(`^  ${name} +\\S`)))
      expect(entries.find((entry) => entry.startsWith(`  ${name} `))).toContain(description)
    }
    for (const flag of ['--run <id>', '--cwd <dir>', '--text', '--help', '--version'])
      expect(result.stdout).toContain(flag)
  })

  it('is what bare `pair-loop` and `pair-loop help` print for a person, exit 0, nothing on stderr', async () => {
    const sb = sandbox()
    const help = await sb.cli(['--help'])
    for (const args of [[], ['help']]) {
      const result = await sb.cli(args)
      expect(result.code, args.join(' ')).toBe(0)
      expect(result.stderr).toBe('')
      expect(result.stdout).toBe(help.stdout)
    }
  })

  it("`help <command>` is that command's --help", async () => {
    const sb = sandbox()
    const viaHelp = await sb.cli(['help', 'reply'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toBe((await sb.cli(['reply', '--help'])).stdout)
    expect(viaHelp.stdout).toContain('--disposition')
    expect(viaHelp.stdout).toContain('--text')
  })

  it('says JSON is the default and --text is for a person', async () => {
    const result = await sandbox().cli(['--help'])
    expect(result.stdout.replace(/\s+/g, ' ')).toContain('JSON is the default, there is no --json')
  })
})

/** A command's --help, as the command prints it (in-process: the same runScript a process runs). */
async function commandHelpOf(name: string): Promise<string> {
  let stdout = ''
  const io = { stdin: textInput(''), stdout: (text: string) => (stdout += text), stderr: () => {} }
  expect(await runScript((await COMMANDS[name]!()).default, ['--help'], io)).toBe(0)
  return stdout
}

/** The words of one shell command line (quotes honoured; no expansion): enough for the examples. */
const shellWords = (line: string) => [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)

describe("each command's --help", () => {
  const names = Object.keys(COMMANDS)
  const helps = new Map<string, string>()
  const helpOf = async (name: string) => helps.get(name) ?? helps.set(name, await commandHelpOf(name)).get(name)!

  it('fits 100 columns with no line ending in a space, like the overview', async () => {
    const texts = [...(await Promise.all(names.map(helpOf))), (await sandbox().cli(['--help'])).stdout]
    for (const text of texts) {
      for (const line of text.split('\n')) {
        expect([...line].length, line).toBeLessThanOrEqual(100)
        expect(line, 'a trailing space').not.toMatch(/\s$/)
      }
    }
  })

  it("speaks one voice: none of the argument library's own markers", async () => {
    for (const name of names) {
      const help = await helpOf(name)
      expect(help, name).not.toMatch(/\(Required\)|\(Default:|^USAGE|^OPTIONS|=<|\x1b/m)
      expect(help, name).toMatch(/^Usage: pair-loop /)
    }
  })

  it("writes the apostrophe one way, as the rest of a terminal's text does: ' and never ’", async () => {
    const texts = [...(await Promise.all(names.map(helpOf))), (await sandbox().cli(['--help'])).stdout]
    for (const text of texts) expect(text).not.toContain('’')
  })

  it('lists the required flags apart, and in the usage line', async () => {
    const help = await helpOf('reply')
    const required = help.slice(help.indexOf('Required:'), help.indexOf('Flags:'))
    for (const flag of ['--finding <R.N>', '--disposition <fixed|wont-fix|question|ack>', '--body-file <file>']) {
      expect(required).toContain(flag)
      expect(help.split('\n\n')[0]!.replace(/\s+/g, ' ')).toContain(flag)
    }
    expect(required).not.toContain('--post-pr')
  })

  it('shows an example of every command, a command line its flags accept', async () => {
    for (const name of names) {
      const help = await helpOf(name)
      const examples = help
        .slice(help.indexOf('Examples:'))
        .split('\n\n')[0]!
        .split('\n')
        .slice(1)
        .map((line) => /pair-loop .*/.exec(line.replace(/ +#.*$/, ''))?.[0].split(/ [|<>] /)[0])
      expect(examples.length, `${name} has an example`).toBeGreaterThan(0)
      for (const example of examples) {
        const [, command, ...flags] = shellWords(example!)
        expect(command, example).toBe(name)
        const { default: def } = await COMMANDS[name]!()
        expect(() => parseFlags({ args: withCommonArgs(def.args) }, flags), example).not.toThrow()
      }
    }
  })
})

describe('did you mean', () => {
  const sb = sandbox()

  it('suggests status for stauts, as usage naming the suggestion', async () => {
    const error = expectError(await sb.cli(['stauts']), 'usage')
    expect(error.message).toMatch(/^unknown command "stauts" \(did you mean "status"\?\); one of: /)
    expect(error.suggestion).toBe('status')
  })

  it('suggests --summary for --sumary', async () => {
    const error = expectError(await sb.cli(['coder-done', '--sumary', 'x']), 'usage')
    expect(error.message).toBe('unknown flag --sumary (did you mean --summary?)')
    expect(error.suggestion).toBe('--summary')
  })

  it('suggests --body-file for --body: the one flag that is the typed one with a tail', async () => {
    const error = expectError(await sb.cli(['reply', '--body', 'x']), 'usage')
    expect(error.message).toBe('unknown flag --body (did you mean --body-file?)')
    expect(error.suggestion).toBe('--body-file')
  })

  it("says which values an enum flag takes, suggesting the near one, in our words rather than citty's", async () => {
    let cittySaid = ''
    try {
      parseArgs(['--disposition', 'fixd'], { disposition: { type: 'enum', options: ['fixed', 'wont-fix'] } })
    } catch (error) {
      cittySaid = (error as Error).message
    }
    expect(cittySaid.length).toBeGreaterThan(5)
    const args = ['reply', '--finding', '1.1', '--disposition', 'fixd', '--body-file', '-']
    const error = expectError(await sb.cli(args), 'usage')
    expect(error.message).toBe('--disposition takes fixed, wont-fix, question, ack, not "fixd" (did you mean "fixed"?)')
    expect(error.suggestion).toBe('fixed')
    expect(error.message).not.toContain(cittySaid.split(':')[0])
  })

  it('suggests --version for --verison, -v and version', async () => {
    for (const typed of ['--verison', '-v', 'version']) {
      const error = expectError(await sb.cli([typed]), 'usage')
      expect(error.message, typed).toContain(`unknown command ${JSON.stringify(typed)} (did you mean "--version"?)`)
      expect(error.suggestion).toBe('--version')
    }
  })

  it('says JSON is the default to --json, as a command or as a flag', async () => {
    for (const args of [['--json'], ['status', '--json']]) {
      const error = expectError(await sb.cli(args), 'usage')
      expect(error.message, args.join(' ')).toMatch(
        /JSON is already the default.*leave .* out; --text prints for a person/,
      )
    }
  })

  it("says a missing required flag in pair-loop's words, not the argument library's", async () => {
    let cittySaid = ''
    try {
      parseArgs([], { task: { type: 'string', required: true } })
    } catch (error) {
      cittySaid = (error as Error).message
    }
    expect(cittySaid).toContain('--task')
    const error = expectError(await sb.cli(['start']), 'usage')
    expect(error.message).toBe('missing required flag --task')
    expect(error.flag).toBe('--task')
    expect(error.message).not.toBe(cittySaid)
  })

  it('suggests nothing when no command or flag is near', async () => {
    expect(expectError(await sb.cli(['frobnicate']), 'usage').suggestion).toBeUndefined()
    const error = expectError(await sb.cli(['status', '--bogus']), 'usage')
    expect(error.message).toBe('unknown flag --bogus')
  })

  it('suggests "reviewer" for a config key "reviwer", naming the file', async () => {
    const repo = tempDir('pl-typo-')
    git(repo, ['init', '-q'])
    writeFileSync(join(repo, REPO_CONFIG_NAME), JSON.stringify({ pair_loop: { reviwer: 'codex' } }))
    git(repo, ['add', '-A'])
    git(repo, ['commit', '-qm', 'config'])
    const error = expectError(
      await runCli(['start', '--task', 'x'], { cwd: repo, env: isolatedEnv() }),
      'config_invalid',
    )
    expect(error.message).toBe(`unknown key "reviwer" in ${REPO_CONFIG_NAME} (did you mean "reviewer"?)`)
    expect(error.keys).toEqual(['pair_loop.reviwer'])
    expect(error.path).toBe(join(repo, REPO_CONFIG_NAME))
  })
})

/** What git itself says, run the way a person would: the text pair-loop must not pass on. */
function gitSays(cwd: string, args: string[]): string {
  const out = spawnSync('git', args, { cwd, encoding: 'utf8', env: isolatedEnv() })
  expect(out.status, `git ${args.join(' ')} fails here`).not.toBe(0)
  return out.stderr.trim().split('\n')[0]!
}

/** What valibot itself says about a config file's content. */
function valibotSays(content: unknown): string {
  const result = v.safeParse(ConfigFile, content)
  expect(result.success).toBe(false)
  return result.issues![0]!.message
}

/** What the JSON parser of this runtime (the CLI's too) says about a text. */
function parserSays(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${text} parsed`)
}

describe('messages in the person’s words', () => {
  it('a repository without a commit: "the repository has no commit yet: make one first"', async () => {
    const repo = tempDir('pl-empty-')
    git(repo, ['init', '-q'])
    const error = expectError(await runCli(['start', '--task', 'x'], { cwd: repo, env: isolatedEnv() }), 'git_error')
    expect(error.message).toBe('the repository has no commit yet: make one first')
  })

  it("a damaged trust record: config_invalid naming it and the fix, not the parser's words", async () => {
    const sb = sandbox({ [REPO_CONFIG_NAME]: JSON.stringify({ pair_loop: { reviewer_cmd: ['sh', 'x.sh'] } }) })
    mkdirSync(sb.home, { recursive: true })
    writeFileSync(join(sb.home, 'trust.json'), '{"version": 1, "trusted": {')
    const error = expectError(await sb.cli(['trust', '--show']), 'config_invalid')
    expect(error.path).toBe(join(sb.home, 'trust.json'))
    expect(error.message).toMatch(/trust\.json is not valid JSON.*remove it, then run `pair-loop trust` again/)
    expect(error.message).not.toContain(parserSays('{"version": 1, "trusted": {'))
  })

  interface Case {
    name: string
    code: 'config_invalid' | 'git_error'
    /** Sets up the folder to run `start` in; returns what the library itself says there. */
    setUp: (dir: string) => string
    args?: string[]
  }
  const withConfig = (content: string) => (dir: string) => {
    git(dir, ['init', '-q'])
    writeFileSync(join(dir, REPO_CONFIG_NAME), content)
    git(dir, ['add', '-A'])
    git(dir, ['commit', '-qm', 'config'])
    return ''
  }
  const cases: Case[] = [
    {
      name: 'an unknown config key',
      code: 'config_invalid',
      setUp: (dir) =>
        withConfig('{"pair_loop":{"reviwer":"codex"}}')(dir) || valibotSays({ pair_loop: { reviwer: 1 } }),
    },
    {
      name: 'a config value of the wrong type',
      code: 'config_invalid',
      setUp: (dir) =>
        withConfig('{"pair_loop":{"max_rounds":"3"}}')(dir) || valibotSays({ pair_loop: { max_rounds: '3' } }),
    },
    {
      name: 'a config file that is not JSON',
      code: 'config_invalid',
      setUp: (dir) => withConfig('{"pair_loop": {')(dir) || parserSays('{"pair_loop": {'),
    },
    {
      name: 'a repository with no commit',
      code: 'git_error',
      setUp: (dir) => {
        git(dir, ['init', '-q'])
        return gitSays(dir, ['rev-parse', '--verify', 'HEAD^{commit}'])
      },
    },
    {
      name: 'a folder outside any repository',
      code: 'git_error',
      setUp: (dir) => gitSays(dir, ['rev-parse', '--show-toplevel']),
    },
    {
      name: 'an unknown --base',
      code: 'git_error',
      setUp: (dir) => {
        git(dir, ['init', '-q'])
        git(dir, ['commit', '-q', '--allow-empty', '-m', 'first'])
        return gitSays(dir, ['rev-parse', '--verify', '--end-of-options', 'no-such-rev^{commit}'])
      },
      args: ['--base', 'no-such-rev'],
    },
  ]
  for (const { name, code, setUp, args = [] } of cases) {
    it(`${name}: ${code}, and not one word of the library's own message`, async () => {
      const dir = tempDir('pl-words-')
      const librarySaid = setUp(dir)
      expect(librarySaid.length).toBeGreaterThan(5)
      const env = isolatedEnv()
      const result = await runCli(['start', '--task', 'x', ...args], { cwd: dir, env })
      const { message } = expectError(result, code)
      const text = await runCli(['start', '--task', 'x', ...args, '--text'], { cwd: dir, env })
      expect(text.code).toBe(result.code)
      // what a person reads: the message, the stderr line, the --text line (details may keep git's stderr for a look)
      for (const said of [message, result.stderr, text.stdout, text.stderr]) {
        expect(said).not.toContain(librarySaid)
        expect(said).not.toMatch(/Invalid (key|type|value): Expected|Expected never|fatal:|Needed a single revision/)
      }
    })
  }
})
