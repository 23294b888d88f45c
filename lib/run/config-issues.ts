// What is wrong with a config file, in the person's words: which key, in which file, what it must be, how to fix it.
// Never the schema library's own text ("Invalid key: Expected never but received …") nor the JSON parser's.
import { VENDORS } from './vendors.ts'
import { askUntrusted } from './ask.ts'
import { fail } from '../ground/errors.ts'
import { SEVERITIES } from './severity-gate.ts'
import { relative, isAbsolute } from 'node:path'
import type * as v from 'valibot'
import { context } from '../ground/context.ts'
import { closest, didYouMean } from '../ground/suggest.ts'

type Issue = v.BaseIssue<unknown>
type Schema = v.GenericSchema & { entries?: Record<string, Schema>; wrapped?: Schema; value?: Schema; item?: Schema }

/** One problem of a config file: the key at fault (dotted, '' for the whole file) and the sentence for a person. */
export interface ConfigProblem {
  key: string
  message: string
}

/** The vendors as a person reads the choice: "claude", "codex" or "gemini". */
const VENDOR_CHOICE = `${VENDORS.slice(0, -1)
  .map((vendor) => `"${vendor}"`)
  .join(', ')} or "${VENDORS.at(-1)}"`

/** What each key must hold, as the person would write it. Keys without a line here are described from the schema. */
const MUST_BE: Record<string, string> = {
  pair_loop: 'an object such as {"reviewer": "codex"}',
  budget: 'an object such as {"per_run_usd": 5}',
  pricing: 'an object of models, such as {"my-model": {"input": 3, "output": 15}}',
  'pair_loop.coder': VENDOR_CHOICE,
  'pair_loop.reviewer': VENDOR_CHOICE,
  'pair_loop.reviewers_fallback': `a list of vendors, such as ["${VENDORS[1]}"], each one of ${VENDOR_CHOICE}`,
  'pair_loop.reviewers': `a panel of two or more vendors, each once, such as ["${VENDORS[1]}", "${VENDORS[2]}"], each one of ${VENDOR_CHOICE}`,
  'pair_loop.approval': 'how a panel approves: "all", "any" or "quorum:N"',
  'pair_loop.max_rounds': 'a whole number, 1 or more',
  'pair_loop.pr_max_rounds': 'a whole number, 1 or more',
  'pair_loop.stalemate_rounds': 'a whole number, 1 or more',
  'pair_loop.reviewer_resume_s': 'a whole number of seconds, from 0 (never resume) to 86400',
  'pair_loop.block_on': `the least severity that blocks approval: ${SEVERITIES.map((s) => `"${s}"`).join(', ')} (nit: every finding blocks)`,
  'pair_loop.reviewer_timeout_s': 'a whole number of seconds, 1 or more',
  'pair_loop.review_wait_s': 'a whole number of seconds, from 0 to 86400',
  'pair_loop.max_diff_bytes': 'a whole number of bytes, 1 or more',
  'pair_loop.reviewer_cmd': 'a list of strings such as ["sh", "review.sh"], or null',
  'pair_loop.reviewer_model': 'a model name, or null',
  'pair_loop.claude_bin': 'a program name or path',
  'pair_loop.codex_bin': 'a program name or path',
  'pair_loop.gemini_bin': 'a program name or path',
  'pair_loop.allow_reviewer_cmd': 'true or false',
  'pair_loop.allow_same_vendor': 'true or false',
  'pair_loop.reviewer_env': 'an object of variables, such as {"ANTHROPIC_API_KEY": true, "TZ": "UTC"}',
  'pair_loop.reviewer_env.*': 'a string (the value), or true (the value of the command that asks)',
  'pair_loop.claude_config_dir': 'an absolute path',
  'pair_loop.codex_home': 'an absolute path',
  'pair_loop.gemini_cli_home': 'an absolute path',
  'pair_loop.review_instructions': 'the absolute path of a file of your rules for the reviewer, or null',
  'pair_loop.review_exclude': 'a list of globs, such as ["*.lock", "vendor/"] (docs/config.md says how they match)',
  'pair_loop.review_exclude.*':
    'a glob naming something, such as "*.lock" or "docs/generated/**", without empty, . or .. names',
  'pair_loop.pr_action_reviews': 'a list of entries such as {"workflow": ".github/workflows/claude-review.yml"}',
  'pair_loop.pr_action_reviews.*': 'an entry naming a "workflow", a "marker" or both',
  'pair_loop.pr_action_reviews.*.*': 'a string, not empty',
  'budget.per_run_usd': 'a number of dollars, 0 or more, or null for no limit',
  'budget.warn_ratio': 'a number from 0 to 1',
  'pricing.*': 'an object of USD per million tokens, such as {"input": 3, "output": 15}',
  'pricing.*.*': 'a number of USD per million tokens, 0 or more',
}

/** The file as the person sees it: relative to where they are when it lies below, else the whole path. */
export function shownPath(path: string, cwd = context().cwd): string {
  const below = relative(cwd, path)
  return below && !below.startsWith('..') && !isAbsolute(below) ? below : path
}

/** Each schema issue of `file` as a problem in the person's words (at most `limit`). */
export function configProblems(schema: Schema, issues: Issue[], file: string, limit = 10): ConfigProblem[] {
  return issues.slice(0, limit).map((issue) => describe(schema, issue, shownPath(file)))
}

/** The file is not JSON at all. `parserSaid` is read only for a position, never shown. */
export function notJson(text: string, file: string, parserSaid: string): ConfigProblem {
  const shown = shownPath(file)
  if (!text.trim()) return { key: '', message: `${shown} is empty: write {} in it, or remove it` }
  const at = /position (\d+)/.exec(parserSaid)
  const where = at ? ` at ${lineAndColumn(text, Number(at[1]))}` : ''
  const comment = /^\s*\/\//m.test(text) ? ' (JSON has no comments)' : ''
  const comma = /,\s*[}\]]/.test(text) ? ' (JSON has no comma before a closing bracket)' : ''
  return {
    key: '',
    message: `${shown} is not valid JSON${where}${comment || comma}: fix it, or remove the file`,
  }
}

/** Something other than a regular file stands where the config should be: named, never opened. */
export function notRegular(file: string, kind: string): ConfigProblem {
  return {
    key: '',
    message: `${shownPath(file)} is ${kind}, not a regular file: pair-loop does not open it; replace it with a file, or remove it`,
  }
}

/** The file holds JSON, but not one object. */
export function notAnObject(file: string): ConfigProblem {
  return { key: '', message: `${shownPath(file)} must hold one JSON object, such as {"pair_loop": {"max_rounds": 3}}` }
}

/**
 * What a key of the repository's config would do with its value, for `config_untrusted`: in the person's words,
 * against `personal`, the value in force without it (theirs, or the default).
 */
export const trustEffect = (key: string, value: unknown, personal: unknown): string =>
  `would ${effectOf(key, value, personal)}`

/** What a key of the config does with its value, for `pair-loop trust`: "raises the budget from $5 to $100". */
export const keyEffect = (key: string, value: unknown, personal: unknown): string =>
  thirdPerson(effectOf(key, value, personal))

/**
 * `config_untrusted`: each key of the repository's file `file`, what it would do with its value, and the command that
 * trusts the file.
 */
export function untrustedConfig(
  file: { path: string; sha256: string },
  effects: Array<{ key: string; value: unknown; effect: string }>,
  tracked: boolean,
  repo: string,
): never {
  const untracked = tracked
    ? ''
    : " It is not the file git tracks at the run's base commit (untracked, ignored or changed since), so every key it sets needs your trust."
  fail(
    'config_untrusted',
    `${shownPath(file.path)} sets ${effects.map(({ key, effect }) => `${key}, which ${effect}`).join('; ')}.${untracked} You have not trusted this content: read it, then run \`pair-loop trust --cwd ${repo}\``,
    {
      path: file.path,
      keys: effects.map(({ key }) => key),
      effects,
      tracked_at_base: tracked,
      sha256: file.sha256,
      next: 'ask-user',
      ask: askUntrusted(repo),
    },
  )
}

/** The effect with its verb in the base form ("run `sh review.sh` as the reviewer"): `would` or a tense goes before. */
function effectOf(key: string, value: unknown, personal: unknown): string {
  const json = shownValue(value)
  switch (key) {
    case 'pair_loop.reviewer_cmd':
      return Array.isArray(value)
        ? `run \`${value.join(' ')}\` as the reviewer`
        : 'run the reviewer CLI itself, not a command'
    case 'pair_loop.claude_bin':
    case 'pair_loop.codex_bin':
    case 'pair_loop.gemini_bin':
      return `run \`${value}\` wherever pair-loop runs ${key.slice('pair_loop.'.length, -'_bin'.length)}`
    case 'pair_loop.coder':
      return `count the coder's spending from ${value}'s transcripts only`
    case 'pair_loop.reviewer_model':
      return value === null ? "give the reviewer its CLI's default model" : `have the reviewer use ${json}`
    case 'pair_loop.pr_bots':
      return Array.isArray(value) && value.length === 0
        ? "read no bot's review on the PR (so a bot's requested changes no longer block)"
        : `read only ${json} as review bots on the PR`
    case 'pair_loop.pr_action_reviews':
      return Array.isArray(value) && value.length === 0
        ? 'read no github-actions[bot] comment as a review on the PR'
        : `read github-actions[bot] comments identified by ${json} as a review bot's on the PR`
    case 'pricing':
      return `price ${Object.keys(value as object).join(', ') || 'no model'} at its own rates`
    case 'budget.per_run_usd':
      return budgetEffect(value as number | null, personal as number | null)
    case 'pair_loop.max_diff_bytes':
      return typeof value === 'number' && typeof personal === 'number' && value < personal
        ? `cut the diff the reviewer sees from ${personal} to ${value} bytes`
        : `let the reviewer see ${value} bytes of the diff (yours: ${personal})`
    case 'pair_loop.reviewer':
      return `have ${value} review`
    case 'pair_loop.allow_reviewer_cmd':
      return value === true ? 'let a command line choose any program as the reviewer' : `set it to ${json}`
    case 'pair_loop.allow_same_vendor':
      return value === true ? "let the coder's own vendor review its work" : `set it to ${json}`
    case 'pair_loop.reviewer_env':
      return `give the reviewer the variables ${Object.keys(value as object).join(', ') || '(none)'}`
    case 'pair_loop.reviewers_fallback':
      return `fall back to ${Array.isArray(value) && value.length ? value.join(', then ') : 'no other reviewer'} when the reviewer's CLI is missing`
    case 'pair_loop.reviewers':
      return `have a panel of ${Array.isArray(value) ? value.join(', ') : json} review each round`
    case 'pair_loop.approval':
      return `let a panel's round count as approved by ${json} of its members' approvals`
    case 'pair_loop.claude_config_dir':
    case 'pair_loop.codex_home':
    case 'pair_loop.gemini_cli_home':
      return `read the agent's transcripts and settings from ${json}`
    case 'pair_loop.max_rounds':
      return `allow ${value} review rounds before asking you (yours: ${personal})`
    case 'pair_loop.reviewer_timeout_s':
      return `give the reviewer ${value} s (yours: ${personal} s)`
    case 'pair_loop.review_instructions':
      return value === null
        ? 'give the reviewer none of your rules'
        : `add the rules in ${value} to the reviewer's prompt as yours`
    case 'pair_loop.review_exclude':
      return Array.isArray(value) && value.length
        ? `hide the changed paths matching ${json} from the reviewer (excluded by config, not reviewed)`
        : 'show the reviewer every changed path'
    case 'pair_loop.block_on':
      return `count a round as approved when every finding is below ${value} (yours: ${personal}, where ${personal === 'nit' ? 'every finding blocks' : `${personal} and above block`})`
    default:
      return `set it to ${json} (yours: ${shownValue(personal)})`
  }
}

/** A run's limit against the person's: raised, lowered, lifted or set, in dollars as they wrote them. */
function budgetEffect(value: number | null, personal: number | null): string {
  if (value === null) return personal === null ? 'keep the run without a limit' : `lift your limit of $${personal}`
  if (personal === null) return `set the run's budget to $${value}`
  if (value === personal) return `keep the budget at $${value}`
  return `${value > personal ? 'raise' : 'lower'} the budget from $${personal} to $${value}`
}

/** "run ..." as "runs ...": the first word of a phrase in the third person. */
function thirdPerson(phrase: string): string {
  const [verb, ...rest] = phrase.split(' ')
  const said = verb === 'have' ? 'has' : /(s|sh|ch|x|z)$/.test(verb!) ? `${verb}es` : `${verb}s`
  return [said, ...rest].join(' ')
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n')
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`
}

function describe(schema: Schema, issue: Issue, shown: string): ConfigProblem {
  const keys = (issue.path ?? []).map((item) => String(item.key))
  const dotted = keys.join('.')
  if (issue.type === 'strict_object' && issue.expected === 'never') return unknownKey(schema, keys, shown)
  if (issue.type === 'strict_object' && issue.input === undefined && issue.expected?.startsWith('"')) {
    const parent = keys.slice(0, -1).join('.')
    return {
      key: dotted,
      message: `${parent ? `"${parent}"` : 'the top level'} of ${shown} needs the key ${issue.expected}`,
    }
  }
  if (keys.length === 0) return notAnObject(shown)
  return {
    key: dotted,
    message: `"${dotted}" in ${shown} must be ${mustBe(keys, issue)}, not ${shownValue(issue.input)}`,
  }
}

function unknownKey(schema: Schema, keys: string[], shown: string): ConfigProblem {
  const key = keys.at(-1)!
  const parent = keys.slice(0, -1)
  const known = Object.keys(entriesAt(schema, parent) ?? {})
  const suggestion = closest(key, known)
  const dotted = keys.join('.')
  if (suggestion) return { key: dotted, message: `unknown key "${key}" in ${shown}${didYouMean(suggestion)}` }
  const home = Object.entries(entriesAt(schema, []) ?? {}).find(([, section]) => key in (entriesOf(section) ?? {}))
  if (home && parent.length <= 1)
    return { key: dotted, message: `unknown key "${key}" in ${shown}: it belongs under "${home[0]}"` }
  const where = parent.length ? `"${parent.join('.')}" takes` : 'the file takes'
  return {
    key: dotted,
    message: `unknown key "${key}" in ${shown}: remove or rename it (${where} ${known.join(', ') || 'no key'})`,
  }
}

/** What the key must hold: from the table, else from the issue's kind. */
function mustBe(keys: string[], issue: Issue): string {
  const pattern = keys.map((key, i) => ((keys[0] === 'pricing' && i > 0) || /^\d+$/.test(key) ? '*' : key)).join('.')
  if (MUST_BE[pattern]) return MUST_BE[pattern]
  const expected = issue.expected ?? ''
  switch (issue.type) {
    case 'boolean':
      return 'true or false'
    case 'number':
      return 'a number'
    case 'integer':
      return 'a whole number'
    case 'string':
      return 'a string'
    case 'min_length':
      return 'not empty'
    case 'array':
      return 'a list'
    case 'min_value':
      return `${expected.replace('>=', '')} or more`
    case 'max_value':
      return `${expected.replace('<=', '')} or less`
    case 'picklist':
      return `one of ${expected.replace(/^\(|\)$/g, '').replace(/ \| /g, ', ')}`
    default:
      return issue.type.includes('object') || issue.type === 'record' ? 'an object' : 'something else'
  }
}

const shownValue = (value: unknown) => {
  const text = value === undefined ? 'nothing' : JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The keys an object schema takes (through optional and nullable wrappers, and records' values). */
function entriesAt(schema: Schema, keys: string[]): Record<string, Schema> | undefined {
  let current: Schema | undefined = schema
  for (const key of keys) {
    const inner: Schema | undefined = unwrap(current)
    current = inner?.entries ? inner.entries[key] : (inner?.item ?? inner?.value)
  }
  return entriesOf(current)
}

const entriesOf = (schema: Schema | undefined) => unwrap(schema)?.entries

function unwrap(schema: Schema | undefined): Schema | undefined {
  let current = schema
  while (current?.wrapped) current = current.wrapped
  return current
}
