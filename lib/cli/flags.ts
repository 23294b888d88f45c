// Reading a command's flags (citty underneath): strict about unknown flags and missing values, with a "did you mean"
// for a near miss, and the flags every command takes (`--text`).
import { parseArgs, type ArgsDef, type ParsedArgs } from 'citty'
import { PairLoopError, fail } from '../ground/errors.ts'
import { closest, didYouMean } from '../ground/suggest.ts'
import { stripControl } from '../ground/text.ts'

/** What parsing needs of a command: its flags. */
export interface FlagsOf<A extends ArgsDef> {
  args: A
}

/** Flags every command takes besides its own (DESIGN.md, Commands). */
export const COMMON_ARGS = {
  text: {
    type: 'boolean',
    description: 'print the result for a person (aligned tables, no JSON); never switched on by a terminal',
  },
} as const satisfies ArgsDef

/** A command's own flags with the common ones. */
export const withCommonArgs = <A extends ArgsDef>(args: A): A & typeof COMMON_ARGS => ({ ...args, ...COMMON_ARGS })

/**
 * Whether `--name` (or one of its spellings) stands where a flag goes, not as another flag's value: `start --task
 * -h` is a task named "-h", `start --task --text` a task named "--text"... unless that token is a flag itself.
 */
export function flagGiven(args: ArgsDef, rawArgs: string[], spellings: string[]): boolean {
  const flags = describeFlags(args)
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!
    if (spellings.includes(token)) return true
    if (token === '--') return false
    const [name, inline] = splitFlag(token)
    if (token.startsWith('-') && inline === undefined && flags.get(name)?.takesValue) i++ // its value, whatever it looks like
  }
  return false
}

/** citty accepts unknown flags and ignores `required` on enums: check both ourselves so a typo is `usage`, not a silent pass. */
export function parseFlags<A extends ArgsDef>(def: FlagsOf<A>, rawArgs: string[]): ParsedArgs<A> {
  const flags = describeFlags(def.args)
  const given = new Set<string>() // the flags given; one with a value is given once: the second would silently win
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!
    if (token === '--') fail('usage', `unexpected arguments after --: ${rawArgs.slice(i + 1).join(' ')}`)
    if (!token.startsWith('-') || token === '-')
      fail('usage', `unexpected argument ${JSON.stringify(token)}`, { argument: token })
    const [name, inlineValue] = splitFlag(token)
    const flag = flags.get(name)
    if (!flag) unknownFlag(token.split('=')[0]!, flags)
    if (flag.takesValue && given.has(flag.name))
      fail('usage', `--${flag.name} is given twice; give it once`, { flag: `--${flag.name}` })
    given.add(flag.name)
    if (flag.takesValue && inlineValue === undefined) {
      const value = rawArgs[i + 1]
      if (value === undefined || (value.startsWith('--') && flags.has(splitFlag(value)[0])))
        fail('usage', `--${flag.name} needs a value`, { flag: `--${flag.name}` })
      i++
    }
    const value = inlineValue ?? rawArgs[i]
    if (flag.options && value !== undefined && !flag.options.includes(value)) notAnOption(flag, value, flag.options)
    if (!flag.takesValue && inlineValue !== undefined && !['true', 'false'].includes(inlineValue)) {
      fail('usage', `--${flag.name} takes no value`, { flag: `--${flag.name}` })
    }
  }
  // before citty, which says a missing one in its own words ("Missing required argument: --task")
  for (const [name, arg] of Object.entries(def.args))
    if (arg.required && arg.type !== 'positional' && !given.has(name))
      fail('usage', `missing required flag --${name}`, { flag: `--${name}` })
  let parsed: ParsedArgs<A>
  try {
    parsed = parseArgs(rawArgs, def.args)
  } catch (error) {
    throw new PairLoopError('usage', stripControl((error as Error).message))
  }
  for (const [name, arg] of Object.entries(def.args)) {
    const value = (parsed as Record<string, unknown>)[name]
    if (arg.type === 'string' || arg.type === 'enum') {
      if (value === false) fail('usage', `--${name} cannot be negated`, { flag: `--${name}` })
      if (value === '') fail('usage', `--${name} needs a value`, { flag: `--${name}` })
    }
    if (arg.required && value === undefined) fail('usage', `missing required flag --${name}`, { flag: `--${name}` })
  }
  return parsed
}

/** `usage` for a flag the command does not have, suggesting the nearest one it has (`--sumary` → `--summary`). */
function unknownFlag(flag: string, flags: Map<string, FlagInfo>): never {
  const known = [...new Set([...flags.values()].map((f) => `--${f.name}`))]
  // a near miss by edits, else the one flag that is the typed one with a tail (`--body` → `--body-file`)
  const longer = known.filter((name) => name.startsWith(`${flag}-`))
  const suggestion = flag.startsWith('--')
    ? (closest(flag, known) ?? (longer.length === 1 ? longer[0] : undefined))
    : undefined
  // gh and friends take --json; here JSON is what every command prints unless --text asks for a person's view
  const why =
    flag === '--json'
      ? ': JSON is already the default (one JSON document on stdout), so leave it out; --text prints for a person'
      : ''
  fail('usage', `unknown flag ${flag}${didYouMean(suggestion, String)}${why}`, {
    flag,
    known,
    ...(suggestion ? { suggestion } : {}),
  })
}

/** `usage` for an enum flag's value it does not take, in our words (citty's own message is never shown). */
function notAnOption(flag: FlagInfo, value: string, options: string[]): never {
  const suggestion = closest(value, options)
  fail('usage', `--${flag.name} takes ${options.join(', ')}, not ${JSON.stringify(value)}${didYouMean(suggestion)}`, {
    flag: `--${flag.name}`,
    options,
    ...(suggestion ? { suggestion } : {}),
  })
}

interface FlagInfo {
  name: string
  takesValue: boolean
  /** The values an enum flag takes. */
  options?: string[]
}

function describeFlags(args: ArgsDef): Map<string, FlagInfo> {
  const flags = new Map<string, FlagInfo>()
  for (const [name, arg] of Object.entries(args)) {
    if (arg.type === 'positional') continue
    const options = arg.type === 'enum' ? (arg as { options?: unknown[] }).options?.map(String) : undefined
    const info = { name, takesValue: arg.type !== 'boolean', ...(options ? { options } : {}) }
    const aliases = ([] as string[]).concat((arg as { alias?: string | string[] }).alias ?? [])
    for (const spelling of [name, kebab(name), camel(name), ...aliases]) flags.set(spelling, info)
    if (arg.type === 'boolean') flags.set(`no-${name}`, info)
  }
  return flags
}

function splitFlag(token: string): [string, string | undefined] {
  const body = token.replace(/^--?/, '')
  const eq = body.indexOf('=')
  return eq === -1 ? [body, undefined] : [body.slice(0, eq), body.slice(eq + 1)]
}

const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** A GraphQL node id such as PRRT_kwDO… (`--thread` of the PR commands); anything else is `usage`. */
export function nodeIdFlag(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && !/^[A-Za-z0-9_=-]+$/.test(value))
    fail('usage', `--${flag} must be a GraphQL node id such as PRRT_kwDO…, got ${JSON.stringify(value)}`, {
      flag: `--${flag}`,
    })
  return value
}

const MAX_REASON_CHARS = 1000

/** `--reason` of pr-flag and pr-stop, trimmed: it must say why, in 1 to 1000 characters. */
export function reasonFlag(value: string | undefined): string | undefined {
  const reason = value?.trim()
  if (reason !== undefined && (reason === '' || reason.length > MAX_REASON_CHARS))
    fail('usage', `--reason must say why, in 1 to ${MAX_REASON_CHARS} characters`, { flag: '--reason' })
  return reason
}
