// The docs can't drift from the code: every `pair-loop …` command line in SKILL.md, contract.md, README.md and
// docs/*.md is checked against the real script's flags (and each whole line of a `sh` block parsed by the CLI's own
// parser), every link between them resolves, contract.md documents every command and flag and exactly the error
// codes lib/ground/errors.ts has, docs/errors.md's table is that table row for row, the Claude Code plugin manifests
// agree with package.json, and docs/pr-phase.md's table of the pr-babysit contract names fields a real pr-check
// document has and exactly pair-loop's reason codes.
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ArgsDef } from 'citty'
import { describe, expect, it } from 'vitest'
import { codeTable } from '../lib/ground/errors.ts'
import { COMMON_ARGS, parseFlags } from '../lib/cli/flags.ts'
import { REASON_CODES } from '../lib/pr/reasons.ts'
import { COMMANDS } from '../scripts/commands.ts'
import { expectOk } from './_expect.ts'
import { prSandbox, README_SCENARIO } from './_pr.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SKILL = 'skills/pair-loop/SKILL.md'
const CONTRACT = 'skills/pair-loop/references/contract.md'
const README = 'README.md'
/** docs/ one file per subject (docs/reference/ holds notes on other tools, not pair-loop's). */
const DOC_FILES = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`)
const PR_PHASE = 'docs/pr-phase.md'
const ERRORS = 'docs/errors.md'

// ---------------------------------------------------------------- reading Markdown

interface CommandLine {
  file: string
  line: number
  text: string
  /** From an inline code span in prose: checked for flags and values, not for required flags. */
  inline: boolean
}

interface Markdown {
  /** Fenced code blocks: the line number of each line and its text. */
  blocks: Array<Array<{ line: number; text: string }>>
  /** Inline code spans outside fences. */
  spans: Array<{ line: number; text: string }>
}

function readMarkdown(text: string): Markdown {
  const blocks: Markdown['blocks'] = []
  const spans: Markdown['spans'] = []
  let fence: string | null = null
  let block: Array<{ line: number; text: string }> = []
  text.split('\n').forEach((raw, index) => {
    const line = index + 1
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(raw)
    if (fence === null && opener) {
      fence = opener[1]!
      block = []
      return
    }
    if (fence !== null) {
      if (raw.trim().startsWith(fence) && raw.trim().replace(/[`~]/g, '') === '') {
        blocks.push(block)
        fence = null
      } else block.push({ line, text: raw })
      return
    }
    for (const match of raw.matchAll(/(`+)([^`]+?)\1/g)) spans.push({ line, text: match[2]!.replace(/\\\|/g, '|') })
  })
  return { blocks, spans }
}

/** Where `pair-loop` (or `pair-loop.ts`, `pair-loop.cjs`, `pair-loop-<command>`) starts a command in a line. */
function commandStarts(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(/pair-loop/g)) {
    const at = match.index!
    const before = at === 0 ? '' : text[at - 1]!
    let rest = text.slice(at + 'pair-loop'.length)
    const script = /^\.(ts|cjs)(?=\s)/.exec(rest)
    if (script) rest = rest.slice(script[0].length)
    else if (before === '/' || before === '.') continue // a path such as skills/pair-loop or ~/.pair-loop
    if (before && !/[\s(`;&|"'/]/.test(before)) continue
    const bin = /^-([a-z][a-z-]*)(?=\s|$)/.exec(rest)
    if (bin && KNOWN_COMMANDS.has(bin[1]!)) {
      found.push(`${bin[1]}${rest.slice(bin[0].length)}`)
      continue
    }
    if (!/^\s/.test(rest)) continue
    found.push(rest.trimStart())
  }
  return found
}

function commandLines(file: string): CommandLine[] {
  const path = join(ROOT, file)
  if (!existsSync(path)) return []
  const { blocks, spans } = readMarkdown(readFileSync(path, 'utf8'))
  const lines: CommandLine[] = []
  for (const block of blocks) {
    let heredoc: string | null = null
    for (let i = 0; i < block.length; i++) {
      const first = block[i]!
      if (heredoc !== null) {
        if (first.text.trim() === heredoc) heredoc = null
        continue
      }
      let text = first.text
      while (text.endsWith('\\') && i + 1 < block.length) text = `${text.slice(0, -1)} ${block[++i]!.text}`
      const doc = /<<-?\s*['"]?(\w+)['"]?/.exec(text)
      if (doc) heredoc = doc[1]!
      for (const start of commandStarts(text)) lines.push({ file, line: first.line, text: start, inline: false })
    }
  }
  for (const span of spans) {
    if (!/^(npx\s+)?pair-loop[\s-]/.test(span.text)) continue
    for (const start of commandStarts(span.text)) lines.push({ file, line: span.line, text: start, inline: true })
  }
  return lines
}

// ---------------------------------------------------------------- reading a command line

/** Shell-ish words of a command line up to the first pipe, `;`, `&`, redirection, comment or closing `)`. */
function words(line: string): string[] {
  const out: string[] = []
  let word = ''
  let has = false
  let brackets = 0
  let parens = 0
  const push = () => {
    if (has) out.push(word)
    word = ''
    has = false
  }
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      word += end === -1 ? line.slice(i + 1) : line.slice(i + 1, end)
      has = true
      i = end === -1 ? line.length : end
      continue
    }
    if (c === '\\') {
      word += line[i + 1] ?? ''
      has = true
      i++
      continue
    }
    if (c === '$' && line[i + 1] === '(') {
      parens++
      word += '$('
      has = true
      i++
      continue
    }
    if (c === ')') {
      if (parens === 0) break
      parens--
      word += c
      continue
    }
    if (parens > 0) {
      word += c
      continue
    }
    if (/\s/.test(c)) {
      push()
      continue
    }
    if (c === '[' && !has) {
      out.push('[')
      brackets++
      continue
    }
    if (c === ']') {
      push()
      out.push(']')
      brackets = Math.max(0, brackets - 1)
      continue
    }
    if (c === '|') {
      if (has)
        word += c // value alternatives: fixed|wont-fix, F|-
      else if (brackets > 0)
        out.push('|') // [--summary S | --summary-file F]
      else break // a pipe
      continue
    }
    if (c === '<' || c === '>') {
      if (/^\d+$/.test(word)) {
        word = '' // 2>&1, 2>/dev/null
        has = false
      }
      break
    }
    if (c === ';' || c === '&') break
    if (c === '#' && !has) break
    word += c
    has = true
  }
  push()
  return out
}

interface Flag {
  name: string
  type: string
  options: string[]
  required: boolean
}

function flagsOf(args: ArgsDef): Map<string, Flag> {
  const flags = new Map<string, Flag>()
  for (const [name, arg] of Object.entries(args)) {
    if (arg.type === 'positional') continue
    const flag = {
      name,
      type: arg.type ?? 'string',
      options: 'options' in arg && Array.isArray(arg.options) ? arg.options.map(String) : [],
      required: Boolean(arg.required),
    }
    const aliases = ([] as string[]).concat((arg as { alias?: string | string[] }).alias ?? [])
    for (const spelling of [name, name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()), ...aliases])
      flags.set(spelling, flag)
  }
  return flags
}

const isPlaceholder = (value: string) => /[$<>{}*…]/.test(value) || value === '...'
const PUNCTUATION = new Set(['[', ']', '|'])

/** Everything wrong with one command line, checked against the command's real `args`. */
function problems(
  command: string,
  args: ArgsDef,
  tokens: string[],
  { checkRequired }: { checkRequired: boolean },
): string[] {
  const flags = flagsOf(args)
  const found: string[] = []
  const seen = new Set<string>()
  let help = false
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (PUNCTUATION.has(token)) continue
    if (!token.startsWith('-') || token === '-') {
      found.push(`unexpected argument ${JSON.stringify(token)}`)
      continue
    }
    const alternatives = token.startsWith('--') && /\|--/.test(token) ? token.split('|') : [token]
    for (const alternative of alternatives) {
      if (alternative === '--help' || alternative === '-h') {
        help = true
        continue
      }
      const body = alternative.replace(/^--?/, '')
      const eq = body.indexOf('=')
      const name = eq === -1 ? body : body.slice(0, eq)
      const inline = eq === -1 ? undefined : body.slice(eq + 1)
      let flag = flags.get(name)
      if (!flag && name.startsWith('no-') && flags.get(name.slice(3))?.type === 'boolean')
        flag = flags.get(name.slice(3))
      if (!flag) {
        found.push(
          `--${name} is not a flag of ${command} (its flags: ${[...new Set([...flags.values()].map((f) => `--${f.name}`))].join(' ') || 'none'})`,
        )
        continue
      }
      seen.add(flag.name)
      if (flag.type === 'boolean') {
        if (inline !== undefined && !['true', 'false'].includes(inline)) found.push(`--${flag.name} takes no value`)
        continue
      }
      let value = inline
      if (value === undefined && alternatives.length === 1) {
        const next = tokens[i + 1]
        if (next === undefined || PUNCTUATION.has(next) || (next.startsWith('-') && next !== '-')) {
          found.push(`--${flag.name} needs a value`)
          continue
        }
        value = next
        i++
      }
      if (flag.type === 'enum' && value !== undefined && !isPlaceholder(value)) {
        for (const option of value.split('|')) {
          if (!flag.options.includes(option))
            found.push(`--${flag.name} ${option}: not one of ${flag.options.join('|')}`)
        }
      }
    }
  }
  if (checkRequired && !help) {
    for (const flag of new Set(flags.values()))
      if (flag.required && !seen.has(flag.name)) found.push(`missing required flag --${flag.name}`)
  }
  return found
}

// ---------------------------------------------------------------- the commands as the dispatcher has them

/** The commands DESIGN.md names: one missing from COMMANDS is being written; only lines naming it fail. */
const KNOWN_COMMANDS = new Set([
  'start',
  'budget-check',
  'coder-done',
  'review',
  'reply',
  'finish',
  'status',
  'findings',
  'install-skill',
  'codes',
  'demo',
  ...Object.keys(COMMANDS),
])

const loaded = new Map<string, Promise<ArgsDef>>()
function argsOf(command: string): Promise<ArgsDef> {
  if (!loaded.has(command))
    loaded.set(
      command,
      // every command also takes the common flags (--text), documented once under "Common flags"
      COMMANDS[command]!().then((module) => ({ ...(module.default.args as ArgsDef), ...COMMON_ARGS })),
    )
  return loaded.get(command)!
}

async function checkLine(entry: CommandLine): Promise<string[]> {
  const tokens = words(entry.text)
  const command = tokens.shift()
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return []
  if (!COMMANDS[command]) {
    return [
      `${command} is not a command of scripts/pair-loop.ts COMMANDS (${Object.keys(COMMANDS).join(', ')})${KNOWN_COMMANDS.has(command) ? '; DESIGN.md has it: its script has not landed yet' : ''}`,
    ]
  }
  const fragment = entry.inline || /\.\.\.|…/.test(entry.text)
  return problems(command, await argsOf(command), tokens, { checkRequired: !fragment })
}

const isCommandWord = (word: string | undefined) => word !== undefined && /^[a-z][a-z0-9-]*$/.test(word)

// ---------------------------------------------------------------- the tests

describe('the command-line reader', () => {
  it('splits words, honours quotes and stops at shell operators', () => {
    expect(words(`reply --finding 1.2 --disposition fixed --body-file - <<'EOF'`)).toEqual([
      'reply',
      '--finding',
      '1.2',
      '--disposition',
      'fixed',
      '--body-file',
      '-',
    ])
    expect(words(`start --task "two words" | jq -r .run_id`)).toEqual(['start', '--task', 'two words'])
    expect(words(`review --reviewer-cmd '["sh","review.sh"]' 2>/dev/null`)).toEqual([
      'review',
      '--reviewer-cmd',
      '["sh","review.sh"]',
    ])
    expect(words(`status --run "$RUN")`)).toEqual(['status', '--run', '$RUN'])
    expect(words(`coder-done [--summary S | --summary-file F|-] [--over-cap]`)).toEqual([
      'coder-done',
      '[',
      '--summary',
      'S',
      '|',
      '--summary-file',
      'F|-',
      ']',
      '[',
      '--over-cap',
      ']',
    ])
    expect(words(`codes && echo done`)).toEqual(['codes'])
  })

  it('finds pair-loop invocations, not paths', () => {
    expect(commandStarts('npx pair-loop codes')).toEqual(['codes'])
    expect(commandStarts('bun scripts/pair-loop.ts demo')).toEqual(['demo'])
    expect(commandStarts('RUN=$(pair-loop status | jq -r .run_id)')).toEqual(['status | jq -r .run_id)'])
    expect(commandStarts('pair-loop-start --task x')).toEqual(['start --task x'])
    expect(commandStarts('cp -r skills/pair-loop ~/.claude/skills/')).toEqual([])
    expect(commandStarts('ls ~/.pair-loop/runs')).toEqual([])
  })

  it('catches an unknown flag, a bad enum value, a missing value and a missing required flag', () => {
    const args: ArgsDef = {
      verdict: { type: 'enum', options: ['APPROVED', 'ABANDONED'], required: true },
      pr: { type: 'string' },
      draft: { type: 'boolean' },
    }
    const check = (line: string, checkRequired = true) => problems('finish', args, words(line), { checkRequired })
    expect(check('--verdict APPROVED --pr 3 --draft')).toEqual([])
    expect(check('--verdict APPROVED|ABANDONED [--pr N] [--no-draft]')).toEqual([])
    expect(check('--verdict MAYBE')).toEqual(['--verdict MAYBE: not one of APPROVED|ABANDONED'])
    expect(check('--verdict APPROVED --merge')[0]).toMatch(/--merge is not a flag of finish/)
    expect(check('--verdict APPROVED --pr')).toEqual(['--pr needs a value'])
    expect(check('--pr 3')).toEqual(['missing required flag --verdict'])
    expect(check('--pr 3', false)).toEqual([])
    expect(check('--verdict APPROVED stray')).toEqual(['unexpected argument "stray"'])
  })
})

const DOCS = [SKILL, CONTRACT, README, ...DOC_FILES]

/** The command lines of a file to check: a command word (or `--help`) first. */
const checkedLines = (file: string) =>
  commandLines(file).filter((entry) => isCommandWord(words(entry.text)[0]) || words(entry.text)[0] === '--help')

for (const file of DOCS.filter((file) => checkedLines(file).length > 0)) {
  describe(`${file}: every pair-loop command line uses real flags`, () => {
    const lines = checkedLines(file)
    if ([SKILL, CONTRACT, README].includes(file))
      it('has command lines to check', () => expect(lines.length).toBeGreaterThan(file === CONTRACT ? 15 : 10))
    for (const entry of lines) {
      it(`${file}:${entry.line}: pair-loop ${entry.text}`, async () => {
        expect(await checkLine(entry)).toEqual([])
      })
    }
  })
}

// ---------------------------------------------------------------- contract.md covers the code

const contract = readFileSync(join(ROOT, CONTRACT), 'utf8')

/** The text under `## \`command\`` up to the next `## ` heading. */
function section(heading: string): string | null {
  const lines = contract.split('\n')
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`)
  if (start === -1) return null
  const end = lines.findIndex((line, i) => i > start && /^## /.test(line))
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n')
}

describe(`${CONTRACT} documents every command and flag`, () => {
  const listed = [...(section('Commands') ?? '').matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]!)

  for (const command of Object.keys(COMMANDS)) {
    it(`${command}: in the commands table, with its own section, synopsis and every flag`, async () => {
      expect(listed).toContain(command)
      const text = section(`\`${command}\``)
      expect(text, `no "## \`${command}\`" section`).not.toBeNull()
      const synopses = readMarkdown(text!)
        .blocks.flat()
        .filter(({ text: line }) => line.startsWith(`pair-loop ${command}`))
      expect(synopses.length, 'a synopsis line in a code block').toBeGreaterThan(0)
      const missing = Object.entries(await argsOf(command))
        .filter(([name, arg]) => arg.type !== 'positional' && !(name in COMMON_ARGS))
        .map(([name]) => `--${name}`)
        .filter((flag) => !new RegExp(`${flag}(?![a-z0-9-])`).test(text!))
      expect(missing, `flags of ${command} not documented in its section`).toEqual([])
    })
  }

  it('documents no command the dispatcher lacks, except those DESIGN.md names (still being written)', () => {
    const documented = [...contract.matchAll(/^## `([a-z-]+)`$/gm)].map((m) => m[1]!)
    expect(documented.filter((command) => !KNOWN_COMMANDS.has(command))).toEqual([])
    expect(listed.filter((command) => !KNOWN_COMMANDS.has(command))).toEqual([])
  })
})

describe(`${CONTRACT} documents the flags every command takes, once`, () => {
  it('has each of them in "Common flags and environment"', () => {
    const common = section('Common flags and environment') ?? ''
    for (const name of Object.keys(COMMON_ARGS)) expect(common, `--${name}`).toContain(`| \`--${name}\``)
  })
})

describe(`${CONTRACT} lists exactly the error codes of lib/ground/errors.ts`, () => {
  const rows = [...(section('Error codes') ?? '').matchAll(/^\| `([a-z_]+)` \| (\d+) \| (yes|no) \|/gm)].map((m) => ({
    code: m[1]!,
    exit: Number(m[2]),
    retryable: m[3] === 'yes',
  }))

  it('same codes, same exit statuses, same retryable flags, in the same order', () => {
    expect(rows).toEqual(codeTable().map(({ code, exit, retryable }) => ({ code, exit, retryable })))
  })

  it('every "`code` (exit N)" mentioned in SKILL.md, contract.md, README.md and docs/ has the right status', () => {
    const exits = new Map(codeTable().map(({ code, exit }) => [code, exit]))
    const wrong: string[] = []
    for (const file of DOCS) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      for (const m of text.matchAll(/`([a-z_]+)`,? \((?:exit )?(\d+)[,)]/g)) {
        if (exits.has(m[1]!) && exits.get(m[1]!) !== Number(m[2])) wrong.push(`${file}: ${m[0]}`)
      }
      for (const m of text.matchAll(/`(\d+)` ([a-z_]+)/g)) {
        if (exits.has(m[2]!) && exits.get(m[2]!) !== Number(m[1])) wrong.push(`${file}: ${m[0]}`)
      }
    }
    expect(wrong).toEqual([])
  })
})

// ---------------------------------------------------------------- the Claude Code plugin

describe('the Claude Code plugin manifests', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string
    version: string
    files: string[]
  }
  const plugin = JSON.parse(readFileSync(join(ROOT, '.claude-plugin', 'plugin.json'), 'utf8')) as Record<
    string,
    unknown
  >
  const marketplace = JSON.parse(readFileSync(join(ROOT, '.claude-plugin', 'marketplace.json'), 'utf8')) as {
    name: string
    owner: { name: string }
    plugins: Array<{ name: string; source: string; version?: string }>
  }

  it('plugin.json names the package, at its version; the skill sits in the default skills/ folder', () => {
    expect(plugin.name).toBe(pkg.name)
    expect(plugin.version).toBe(pkg.version)
    expect(typeof plugin.description).toBe('string')
    expect(existsSync(join(ROOT, 'skills', 'pair-loop', 'SKILL.md'))).toBe(true)
    // skills/ at the plugin root is loaded by default; a `skills` path to the same folder is redundant
    expect(plugin.skills).toBeUndefined()
  })

  it('marketplace.json lists this repository as the plugin (for /plugin marketplace add)', () => {
    expect(marketplace.name).toMatch(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/)
    expect(marketplace.owner.name).toBeTruthy()
    expect(marketplace.plugins).toEqual([
      expect.objectContaining({ name: plugin.name, source: './', version: pkg.version }),
    ])
  })

  it('npm pack ships the skill and the plugin manifests', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['skills', '.claude-plugin']))
  })
})

// ---------------------------------------------------------------- README's pr-babysit table

describe(`${PR_PHASE}: the pr-babysit table names what pr-check really prints`, () => {
  const doc = readFileSync(join(ROOT, PR_PHASE), 'utf8')
  const start = doc.indexOf('## pair-loop and the pr-babysit contract')
  const end = doc.indexOf('\n## ', start + 1)
  const tableText = start === -1 ? '' : doc.slice(start, end === -1 ? undefined : end)
  /** The backticked names in a table's second column (pair-loop's), under its bold title. */
  const pairLoopColumn = (title: string): string[] => {
    const from = tableText.indexOf(`**${title}**`)
    if (from === -1) return []
    const rows = tableText.slice(from).split('\n\n')[1] ?? ''
    return rows
      .split('\n')
      .slice(2) // the header and its rule
      .flatMap((row) => [...(row.split(' | ')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
  }
  /** `a.b[].c`: each part a key of what the last one gave, `[]` an array whose first element the rest is read in. */
  const missing = (doc: unknown, path: string): string | null => {
    let at: unknown = doc
    for (const part of path.split('.')) {
      const array = part.endsWith('[]')
      const key = array ? part.slice(0, -2) : part
      if (Array.isArray(at)) {
        if (at.length === 0) return `${path}: no element to read ${key} in`
        at = at[0]
      }
      if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return `${path}: no ${key}`
      at = (at as Record<string, unknown>)[key]
      if (array && !Array.isArray(at)) return `${path}: ${key} is not an array`
    }
    return null
  }

  it('is there, with its three tables', () => {
    expect(start).toBeGreaterThan(-1)
    for (const title of ['Result fields', 'Reason codes', 'Decision rules']) expect(tableText).toContain(`**${title}**`)
  })

  it('every field it lists is in a real pr-check document', async () => {
    const fields = pairLoopColumn('Result fields')
    expect(fields.length).toBeGreaterThan(40)
    const sb = await prSandbox(README_SCENARIO)
    const doc = expectOk(await sb.cli(['pr-check']))
    expect(fields.map((field) => missing(doc, field)).filter(Boolean)).toEqual([])
  })

  it("lists exactly pair-loop's closed set of reason codes", () => {
    const codes = pairLoopColumn('Reason codes')
    expect([...new Set(codes)].sort()).toEqual([...REASON_CODES].sort())
  })
})

// ---------------------------------------------------------------- docs/errors.md is the code's table

describe(`${ERRORS}: the one table of error codes`, () => {
  it('is lib/ground/errors.ts row for row: code, exit status, retryable, meaning (what `pair-loop codes` prints)', () => {
    const text = readFileSync(join(ROOT, ERRORS), 'utf8')
    const rows = text.split('\n').filter((line) => /^\| `[a-z_]+` \|/.test(line))
    const expected = codeTable().map(
      ({ code, exit, retryable, meaning }) => `| \`${code}\` | ${exit} | ${retryable ? 'yes' : 'no'} | ${meaning} |`,
    )
    expect(rows).toEqual(expected)
  })

  it('is the only copy outside the skill: README and the other docs link to it instead', () => {
    // contract.md keeps the agent's table (what the agent does on each code): it ships with the skill, where a link
    // into docs/ would not resolve; its codes, exits and retry flags are held to the code above.
    const copies = [README, ...DOC_FILES.filter((file) => file !== ERRORS)].filter((file) =>
      /^\| `usage` \| 2 \|/m.test(readFileSync(join(ROOT, file), 'utf8')),
    )
    expect(copies).toEqual([])
  })
})

// ---------------------------------------------------------------- the sh blocks parse, the links resolve

/** The pair-loop command lines of a file's ```sh blocks, continuation lines joined. */
function shCommandLines(file: string): CommandLine[] {
  const lines: CommandLine[] = []
  const text = readFileSync(join(ROOT, file), 'utf8').split('\n')
  let inSh = false
  let fenced = false
  for (let i = 0; i < text.length; i++) {
    const raw = text[i]!
    if (/^ {0,3}```/.test(raw)) {
      inSh = !fenced && /^ {0,3}```sh\s*$/.test(raw)
      fenced = !fenced
      continue
    }
    if (!inSh) continue
    let line = raw
    const first = i + 1
    while (line.endsWith('\\') && i + 1 < text.length) line = `${line.slice(0, -1)} ${text[++i]}`
    for (const start of commandStarts(line)) lines.push({ file, line: first, text: start, inline: false })
  }
  return lines
}

describe("every pair-loop line of a sh block in README.md and docs/ parses with the command's own flag parser", () => {
  // `pair-loop --version` and `--help` are the dispatcher's own, not a command's
  const lines = [README, ...DOC_FILES].flatMap(shCommandLines).filter((entry) => !entry.text.startsWith('-'))
  it('finds them in README and docs/', () => {
    expect(lines.filter((entry) => entry.file === README).length).toBeGreaterThan(15)
    expect(lines.filter((entry) => entry.file !== README).length).toBeGreaterThan(10)
  })
  for (const entry of lines) {
    it(`${entry.file}:${entry.line}: pair-loop ${entry.text}`, async () => {
      const [command, ...rest] = words(entry.text)
      expect(COMMANDS[command!], `${command} is a command`).toBeDefined()
      // the same parse the command runs first: an unknown flag, a missing value or required flag, a bad enum throw
      const args = await argsOf(command!)
      expect(() => parseFlags({ args }, rest), entry.text).not.toThrow()
    })
  }
})

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

function anchorsOf(file: string): Set<string> {
  const found = new Set<string>()
  let fenced = false
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line)
    if (heading) found.add(anchor(heading[1]!))
  }
  return found
}

describe('every link between README.md, docs/ and the skill resolves', () => {
  for (const file of [README, ...DOC_FILES, SKILL, CONTRACT]) {
    it(`${file}: each relative link names a file that exists, and a heading it has`, () => {
      // code is not a link: fenced blocks and inline spans out first
      const text = readFileSync(join(ROOT, file), 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '')
      const broken: string[] = []
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/.test(target)) continue // https:, mailto:
        const [path, hash] = target.split('#') as [string, string | undefined]
        const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), path)
        if (!existsSync(resolved)) broken.push(`${target}: no such file`)
        else if (hash !== undefined && resolved.endsWith('.md')) {
          const relative = resolved.slice(ROOT.length + 1)
          if (!anchorsOf(relative).has(hash)) broken.push(`${target}: no heading #${hash} in ${relative}`)
        }
      }
      expect(broken).toEqual([])
    })
  }

  it('README stays a five-minute read: at most 250 lines, the rest in docs/', () => {
    expect(readFileSync(join(ROOT, README), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(250)
  })

  it('README links every file of docs/', () => {
    const readme = readFileSync(join(ROOT, README), 'utf8')
    expect(DOC_FILES.filter((file) => !readme.includes(`](${file})`))).toEqual([])
  })
})
