import { describe, expect, it } from 'vitest'
import { decimalFlag, defineScript, integerFlag, runScript, textInput } from '../lib/cli/cli.ts'
import { withExit } from '../lib/ground/document.ts'
import { parseFlags } from '../lib/cli/flags.ts'
import { ERROR_CODES, type ErrorCode } from '../lib/ground/errors.ts'
import { sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, thrown } from './_expect.ts'

// ---------------------------------------------------------------- flag parsing, in process

const demo = defineScript({
  name: 'demo',
  description: 'a script to parse flags with',
  args: {
    run: { type: 'string', description: 'run id' },
    'body-file': { type: 'string', required: true, description: 'a file' },
    disposition: { type: 'enum', options: ['fixed', 'ack'], required: true, description: 'how' },
    mode: { type: 'enum', options: ['a', 'b'], description: 'optional enum' },
    'over-cap': { type: 'boolean', description: 'a switch' },
  },
  async run(args) {
    return { args }
  },
})

const ok = ['--body-file', 'f', '--disposition', 'ack']

const usageOf = (rawArgs: string[]) =>
  thrown(() => parseFlags(demo, rawArgs), `parseFlags accepted ${JSON.stringify(rawArgs)}`)

describe('parseFlags', () => {
  it('accepts kebab and camel spellings, inline values and a negated switch', () => {
    expect(parseFlags(demo, ['--body-file=f', '--disposition', 'fixed', '--overCap'])).toMatchObject({
      'body-file': 'f',
      disposition: 'fixed',
      'over-cap': true,
    })
    expect(parseFlags(demo, [...ok, '--no-over-cap'])).toMatchObject({ 'over-cap': false })
    expect(parseFlags(demo, [...ok, '--over-cap=false'])).toMatchObject({ 'over-cap': false })
  })

  it('takes a value that starts with dashes when it is not a known flag', () => {
    expect(parseFlags(demo, [...ok, '--run', '--weird'])).toMatchObject({ run: '--weird' })
  })

  const rejected: Array<[string, string[], RegExp, string | undefined]> = [
    ['an unknown long flag', [...ok, '--typo'], /unknown flag --typo/, '--typo'],
    ['an unknown flag with a value', [...ok, '--typo=1'], /unknown flag --typo/, '--typo'],
    ['an unknown short flag', [...ok, '-x'], /unknown flag -x/, '-x'],
    ['a negated string flag', [...ok, '--no-run'], /unknown flag --no-run/, '--no-run'],
    ['a string flag missing its value at the end', [...ok, '--run'], /--run needs a value/, '--run'],
    ['a string flag followed by another flag', ['--run', ...ok], /--run needs a value/, '--run'],
    ['a string flag with an empty inline value', [...ok, '--run='], /--run needs a value/, '--run'],
    ['a value for a switch', [...ok, '--over-cap=yes'], /--over-cap takes no value/, '--over-cap'],
    ['a bad enum value', ['--body-file', 'f', '--disposition', 'maybe'], /disposition.*maybe/, undefined],
    ['a bad optional enum value', [...ok, '--mode', 'c'], /mode.*\bc\b/, undefined],
    ['a missing required enum', ['--body-file', 'f'], /missing required flag --disposition/, '--disposition'],
    ['a missing required string', ['--disposition', 'ack'], /missing required .*--body-file/i, undefined],
    ['a positional argument', [...ok, 'stray'], /unexpected argument "stray"/, undefined],
    ['arguments after --', [...ok, '--', 'x'], /after --/, undefined],
    ['a flag with a value given twice', [...ok, '--run', 'a', '--run', 'b'], /--run is given twice/, '--run'],
    [
      'a flag given twice in two spellings',
      ['--body-file', 'f', '--bodyFile=g', '--disposition', 'ack'],
      /twice/,
      '--body-file',
    ],
  ]
  for (const [name, rawArgs, message, flag] of rejected) {
    it(`rejects ${name} as usage`, () => {
      const error = usageOf(rawArgs)
      expect(error.code).toBe('usage')
      expect(error.message).toMatch(message)
      expect(error.message).not.toMatch(/\x1b/)
      if (flag) expect(error.details.flag).toBe(flag)
    })
  }
})

describe('number flags', () => {
  it('reads whole numbers within bounds and refuses anything else as usage naming the flag', () => {
    expect(integerFlag(undefined, 'n')).toBeUndefined()
    expect(integerFlag('3', 'n', { min: 1, max: 5 })).toBe(3)
    for (const bad of ['0', '6', '-1', '1.5', 'abc', '', ' 3', '1e2']) {
      expect(() => integerFlag(bad, 'n', { min: 1, max: 5 }), bad).toThrow(
        expect.objectContaining({ code: 'usage', details: { flag: '--n' } }),
      )
    }
  })

  it('reads non-negative decimals and refuses anything else as usage', () => {
    expect(decimalFlag('2.50', 'budget-usd')).toBe(2.5)
    expect(decimalFlag('0', 'budget-usd')).toBe(0)
    for (const bad of ['-1', 'abc', '1.', '.5', '1,5']) {
      expect(() => decimalFlag(bad, 'budget-usd'), bad).toThrow(expect.objectContaining({ code: 'usage' }))
    }
  })
})

describe('runScript', () => {
  const capture = () => {
    const out = { stdout: '', stderr: '' }
    return {
      out,
      io: {
        stdin: textInput(''),
        stdout: (t: string) => {
          out.stdout += t
        },
        stderr: (t: string) => {
          out.stderr += t
        },
      },
    }
  }

  it('prints one success document with version 1', async () => {
    const { out, io } = capture()
    expect(await runScript(demo, ok, io)).toBe(0)
    expect(JSON.parse(out.stdout)).toMatchObject({ version: 1, args: { disposition: 'ack' } })
    expect(out.stdout.split('\n')).toHaveLength(2)
    expect(out.stderr).toBe('')
  })

  it('turns an uncaught exception into internal (70) with one document and one stderr line', async () => {
    const { out, io } = capture()
    const broken = defineScript({
      name: 'broken',
      description: 'x',
      args: {},
      async run() {
        throw new TypeError('boom\nsecond line')
      },
    })
    expect(await runScript(broken, [], io)).toBe(70)
    expect(JSON.parse(out.stdout).errors).toEqual([
      expect.objectContaining({ code: 'internal', message: expect.stringContaining('boom') }),
    ])
    expect(out.stdout.split('\n')).toHaveLength(2)
    expect(out.stderr.split('\n')).toHaveLength(2)
  })

  it('prints money without float noise, rounded to a billionth of a dollar', async () => {
    const { out, io } = capture()
    const sums = defineScript({
      name: 'sums',
      description: 'x',
      args: {},
      async run() {
        return { spent: 0.1 + 0.2, rounds: [{ usd: 0.036682 + 0.02 }], tokens: 1234, tiny: 1.23456789012e-7 }
      },
    })
    expect(await runScript(sums, [], io)).toBe(0)
    expect(out.stdout).toBe('{"version":1,"spent":0.3,"rounds":[{"usd":0.056682}],"tokens":1234,"tiny":1.23e-7}\n')
  })

  it('keeps a success document with its own exit status', async () => {
    const { out, io } = capture()
    const atLimit = defineScript({
      name: 'limit',
      description: 'x',
      args: {},
      async run() {
        return withExit({ level: 'alert' }, 13)
      },
    })
    expect(await runScript(atLimit, [], io)).toBe(13)
    expect(JSON.parse(out.stdout)).toEqual({ version: 1, level: 'alert' })
  })

  it('prints usage text without colour for --help and exits 0', async () => {
    const { out, io } = capture()
    expect(await runScript(demo, ['--disposition', 'x', '--help'], io)).toBe(0)
    expect(out.stdout).toContain('--body-file')
    expect(out.stdout).not.toMatch(/\x1b/)
  })
})

// ---------------------------------------------------------------- the command line (in this process, as the CLI runs it)

describe('flag errors from the command line', () => {
  const sb = sandbox()
  const cases: Array<[string, string[]]> = [
    ['an unknown flag', ['status', '--bogus']],
    ['an unknown flag on start', ['start', '--task', 'x', '--max-round', '2']],
    ['a flag missing its value', ['start', '--task']],
    ['a bad enum value', ['start', '--task', 'x', '--coder', 'gpt']],
    ['a missing required enum', ['reply', '--finding', '1.1', '--body-file', '-']],
    ['a missing required flag', ['finish']],
    ['a malformed number', ['start', '--task', 'x', '--max-rounds', 'three']],
    ['a malformed run id', ['status', '--run', '../x']],
    ['a repeated --task', ['start', '--task', 'one thing', '--task', 'another']],
  ]
  for (const [name, args] of cases) {
    it(`reports ${name} as usage, exit 2, with JSON on stdout`, async () => {
      const error = expectError(await sb.cli(args), 'usage')
      expect(error.message).not.toMatch(/\x1b/)
    })
  }

  it('prints help for a command on stdout and exits 0', async () => {
    const result = await sb.cli(['reply', '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('--disposition')
  })
})

describe('the dispatcher', () => {
  const sb = sandbox()

  it('refuses an unknown command as usage listing the commands', async () => {
    const error = expectError(await sb.cli(['frobnicate']), 'usage')
    expect(error.command).toBe('frobnicate')
    expect(error.commands).toEqual(
      expect.arrayContaining(['start', 'coder-done', 'reply', 'finish', 'status', 'codes']),
    )
  })

  it('prints its help for no command at all, exit 0: a person finding their way (test/cli-people.test.ts)', async () => {
    const result = await sb.cli([])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('coder-done')
  })

  it('prints its help for --help and exits 0', async () => {
    const result = await sb.cli(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('coder-done')
  })
})

// The named few that go through the real binary: the exit status a shell sees is the one the command returned.
describe('the real binary', () => {
  const sb = sandbox()

  it('exits 0 with the document on stdout', async () => {
    const result = await sb.cliProcess(['codes'])
    expect(expectOk(result).codes).toContainEqual(expect.objectContaining({ code: 'usage', exit: 2 }))
  })

  it('exits 2 for a flag error, the usage document on stdout', async () => {
    expectError(await sb.cliProcess(['status', '--bogus']), 'usage')
  })

  it("exits with the code's status for an error of the command's own (run_not_found, 8)", async () => {
    const result = await sb.cliProcess(['status'])
    expectError(result, 'run_not_found')
    expect(result.code).toBe(8)
  })

  it('exits 2 for an unknown command, through the dispatcher', async () => {
    expectError(await sb.cliProcess(['frobnicate']), 'usage')
  })
})

describe('codes', () => {
  // the table of DESIGN.md: the contract the code table must keep
  const CONTRACT: Record<string, [number, boolean]> = {
    usage: [2, false],
    state_malformed: [3, false],
    duplicate_reply: [4, false],
    config_invalid: [5, false],
    dirty_tree: [6, false],
    git_error: [7, false],
    run_not_found: [8, false],
    run_active: [9, false],
    wrong_phase: [10, false],
    round_cap: [11, false],
    finding_not_found: [12, false],
    budget_exceeded: [13, false],
    reviewer_unavailable: [14, false],
    reviewer_failed: [15, true],
    reviewer_timeout: [16, true],
    review_in_progress: [17, true],
    gh_error: [18, true],
    config_untrusted: [19, false],
    branch_moved: [20, false],
    resolve_unconfirmed: [21, true],
    head_moved: [22, true],
    head_not_approved: [23, false],
    internal: [70, false],
    io_error: [74, false],
    locked: [75, true],
    interrupted: [130, true],
  }

  it('prints every code of lib/errors with a distinct exit status, never 1', async () => {
    const doc = expectOk(await sandbox().cli(['codes']))
    const printed = doc.codes as Array<{ code: ErrorCode; exit: number; retryable: boolean; meaning: string }>
    expect(printed.map((c) => c.code).sort()).toEqual(Object.keys(ERROR_CODES).sort())
    for (const entry of printed) {
      expect(entry).toEqual({ code: entry.code, ...ERROR_CODES[entry.code] })
      expect(entry.meaning.length).toBeGreaterThan(0)
    }
    const exits = printed.map((c) => c.exit)
    expect(new Set(exits).size).toBe(exits.length)
    expect(exits).not.toContain(1)
    expect(exits).not.toContain(0)
  })

  it('matches the code table of DESIGN.md', () => {
    expect(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, [e.exit, e.retryable]]))).toEqual(
      CONTRACT,
    )
  })
})

describe('every error', () => {
  it('prints exactly one JSON document on stdout and one line on stderr, across commands', async () => {
    const sb = sandbox()
    const outside = tempDir('pl-outside-')
    const cases: Array<[ErrorCode, string[], string | undefined]> = [
      ['usage', ['coder-done', '--summary', 'x', '--summary-file', 'y'], undefined],
      ['git_error', ['start', '--task', 'x'], outside],
      ['run_not_found', ['status'], undefined],
      ['run_not_found', ['coder-done', '--summary', 'x'], undefined],
      ['run_not_found', ['reply', '--finding', '1.1', '--disposition', 'ack', '--body-file', '-'], undefined],
      ['run_not_found', ['finish', '--verdict', 'ABANDONED'], undefined],
    ]
    for (const [code, args, cwd] of cases) {
      expectError(await sb.cli(args, { cwd, input: code === 'run_not_found' ? 'body' : undefined }), code)
    }
  })
})
