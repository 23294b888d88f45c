// The help a person reads: `pair-loop --help` and `pair-loop <command> --help`, rendered here from each command's flag
// definitions in one voice (never the argument library's `(Required)` or `(Default: …)`), with examples, fitted to
// 100 columns.
import type { ArgDef, ArgsDef } from 'citty'
import { stripControl } from '../ground/text.ts'

/** What help needs of a command: its name, its one-line description and its flags. */
export interface HelpOf {
  name: string
  description: string
  args: ArgsDef
}

/** No line of help is wider than this (a terminal's 100 columns, or a pager's). */
export const HELP_WIDTH = 100

/** Flags listed apart, under "Common flags", in this order; every command has --text and --help. */
const COMMON = ['run', 'cwd', 'text'] as const

/** How JSON and --text relate, said once in each help: an agent reads JSON, a person asks for text. */
export const OUTPUT_NOTE =
  'Prints one JSON document on stdout: JSON is the default, there is no --json; --text prints the same result for a person.'

/** One to three command lines per command, as a person would type them. */
export const EXAMPLES: Record<string, string[]> = {
  start: ['pair-loop start --task "Fix the off-by-one in sum()" --reviewer codex --budget-usd 5'],
  'coder-done': ['pair-loop coder-done --summary "Loop now runs to values.length" --findings-addressed 2'],
  review: [
    'pair-loop review',
    'pair-loop review --reviewer-cmd builtin:approve   # a stub that approves: no model, no key',
  ],
  'budget-check': ['pair-loop budget-check --text', 'pair-loop budget-check --limit 2.50'],
  reply: ['echo "Fixed the bound." | pair-loop reply --finding 1.1 --disposition fixed --body-file -'],
  finish: ['pair-loop finish --verdict APPROVED --create-pr', 'pair-loop finish --verdict ABANDONED'],
  status: ['pair-loop status --text', 'pair-loop status --all --text', 'pair-loop status --wait 60'],
  findings: ['pair-loop findings --text', 'pair-loop findings --format sarif > pair-loop.sarif'],
  codes: ['pair-loop codes --text'],
  demo: ['pair-loop demo', 'pair-loop demo --keep   # keeps its repository and its private PAIR_LOOP_HOME'],
  'install-skill': ['pair-loop install-skill --claude', 'pair-loop install-skill --codex --project'],
  trust: ['pair-loop trust --show', 'pair-loop trust'],
  report: ['pair-loop report', 'pair-loop report --all --out runs.html'],
  'pr-check': ['pair-loop pr-check'],
  'pr-reply': ['pair-loop pr-reply --thread PRRT_kwDOAbc123 --body-file answer.md'],
  'pr-resolve': ['pair-loop pr-resolve --thread PRRT_kwDOAbc123'],
  'pr-flag': ['pair-loop pr-flag --thread PRRT_kwDOAbc123 --reason "asks the agent to push to main"'],
  'stop-hook': ["pair-loop stop-hook < hook-input.json   # as the Claude Code plugin's Stop hook runs it"],
  verify: [
    'pair-loop verify',
    'pair-loop verify --pr 42',
    'pair-loop verify --no-require-vendor   # a stub may approve',
  ],
  mcp: [
    "pair-loop mcp   # as the person's CLI config starts it, for a sandboxed coder",
    'pair-loop mcp --install --codex',
  ],
  setup: [
    'pair-loop setup   # once, as yourself: records your reviewer programs and MCP entries',
    'pair-loop setup --skip-mcp',
  ],
  'pr-stop': ['pair-loop pr-stop --reason "I take the PR from here"'],
}

/** `pair-loop <command> --help`. */
export function commandHelp(def: HelpOf): string {
  const flags = Object.entries(def.args).filter(([, arg]) => arg.type !== 'positional')
  const own = flags.filter(([name]) => !(COMMON as readonly string[]).includes(name))
  const required = own.filter(([, arg]) => arg.required)
  const optional = own.filter(([, arg]) => !arg.required)
  const common: Array<[string, string]> = [
    ...flags.filter(([name]) => (COMMON as readonly string[]).includes(name)).map(row),
    ['--help, -h', 'this help'],
  ]
  const usage = ['pair-loop', def.name, ...required.map(([name, arg]) => label(name, arg)), '[flags]'].join(' ')
  return sections([
    wrap(`Usage: ${usage}`, HELP_WIDTH, 4),
    wrap(def.description, HELP_WIDTH),
    required.length > 0 ? ['Required:', ...table(required.map(row))] : [],
    optional.length > 0 ? ['Flags:', ...table(optional.map(row))] : [],
    ['Common flags:', ...table(common)],
    ['Examples:', ...(EXAMPLES[def.name] ?? []).map((line) => `  ${line}`)],
    wrap(OUTPUT_NOTE, HELP_WIDTH),
  ])
}

/** The flags every command shares, as the overview lists them. */
const COMMON_FLAGS: Array<[string, string]> = [
  ['--run <id>', 'the run a command works on (default: the active run of the repository here)'],
  ['--cwd <dir>', 'work as if started in this directory'],
  ['--text', 'print the result for a person (aligned tables) instead of one JSON document'],
  ['--help, -h', 'this help; `pair-loop <command> --help` for a command, its flags and examples'],
  ['--version', 'print {"version":1,"pair_loop":"<version>"}'],
]

/** `pair-loop`, `pair-loop help` and `pair-loop --help`: every command with what it does, and how to begin. */
export function overviewHelp(commands: ReadonlyArray<readonly [string, string]>): string {
  return sections([
    wrap('pair-loop: a coder <-> reviewer loop between two AI coding agents, one small command per step.', HELP_WIDTH),
    ['Usage: pair-loop <command> [flags]'],
    ['Commands:', ...table(commands)],
    ['Common flags:', ...table(COMMON_FLAGS)],
    [
      'Examples:',
      '  pair-loop demo                                 # a whole loop with a stub reviewer: no keys',
      '  pair-loop install-skill --claude               # teach Claude Code the loop',
      '  pair-loop start --task "Fix the off-by-one in sum()" --budget-usd 5',
      '  pair-loop status --text                        # where the run in this repository stands',
    ],
    wrap(`${OUTPUT_NOTE} Failures carry a code from \`pair-loop codes\`.`, HELP_WIDTH),
  ])
}

/** `--name <hint>` for a flag with a value, `--name <a|b>` for a choice, `--name` for a switch. */
function label(name: string, arg: ArgDef): string {
  if (arg.type === 'boolean') return `--${name}`
  const options = arg.type === 'enum' ? (arg as { options?: unknown[] }).options : undefined
  const hint = options ? options.join('|') : ((arg as { valueHint?: string }).valueHint ?? name)
  return `--${name} <${hint}>`
}

/** A flag's row: its label, and what it does with its default said the way the descriptions say theirs. */
function row([name, arg]: [string, ArgDef]): [string, string] {
  const description = stripControl(arg.description ?? '')
  const fallback = (arg as { default?: unknown }).default
  const withDefault =
    fallback !== undefined && !/\bdefault\b/.test(description) ? `${description} (default: ${fallback})` : description
  return [label(name, arg), withDefault]
}

/** The widest label that keeps its text on its own line; a wider one has a line of its own. */
const LABEL_MAX = 28

/** Two columns: labels, then their text wrapped under itself; a label too long for the column has a line of its own. */
function table(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const fitting = rows.map(([name]) => name.length).filter((length) => length <= LABEL_MAX)
  const column = fitting.length > 0 ? Math.max(...fitting) : 4
  const indent = 2 + column + 2
  return rows.flatMap(([name, text]) => {
    const body = wrap(text, HELP_WIDTH - indent)
    const pad = ' '.repeat(indent)
    if (name.length > column) return [`  ${name}`, ...body.map((line) => pad + line)]
    return [`  ${name.padEnd(column)}  ${body[0] ?? ''}`.trimEnd(), ...body.slice(1).map((line) => pad + line)]
  })
}

/** Words filled into lines of at most `width` columns (a longer word stands alone); later lines indented by `hang`. */
export function wrap(text: string, width: number, hang = 0): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = `${' '.repeat(hang)}${word}`
    } else line = line === '' ? word : `${line} ${word}`
  }
  if (line !== '') lines.push(line)
  return lines
}

/** Sections one blank line apart; the help ends with a newline and no line ends with a space. */
const sections = (parts: string[][]) =>
  `${parts
    .filter((part) => part.length > 0)
    .map((part) => part.map((line) => line.trimEnd()).join('\n'))
    .join('\n\n')}\n`
