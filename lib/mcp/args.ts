// A tool call's arguments read into the command line of its command: each value a flag's value (`--flag=value`, never
// a flag of its own), texts on stdin, and anything the tool does not list refused as `usage` — so no argument can
// name the reviewer, raise the budget or pick a file, however it is spelled.
import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { fail } from '../ground/errors.ts'
import type { ArgSpec, ToolSpec } from './tools.ts'

/** What the person decides, by the names a coder might try: the refusal says where the person sets it. */
const PERSONS = new Set([
  'reviewer',
  'reviewer_cmd',
  'reviewer-cmd',
  'coder',
  'budget',
  'budget_usd',
  'budget-usd',
  'limit',
  'max_rounds',
  'max-rounds',
  'over_cap',
  'over-cap',
  'over_budget',
  'over-budget',
  'out',
  'snapshot_in',
  'snapshot_out',
  'session_id',
  'env',
  'base',
  'timeout',
  'replace_pr',
])

export interface CommandLine {
  /** The repository the call works in (the command's working directory). */
  cwd: string
  argv: string[]
  /** The command's stdin: the one text argument, if given. */
  stdin: string
}

/** The call `args` of tool `name` as its command line; `usage` for anything else. */
export function commandLine(name: string, tool: ToolSpec, args: Record<string, unknown> | undefined): CommandLine {
  const given = args ?? {}
  for (const key of Object.keys(given))
    if (key !== 'cwd' && !Object.hasOwn(tool.args, key)) refuseArgument(name, key, tool)
  const cwd = cwdOf(name, given.cwd)
  const argv: string[] = []
  let stdin = ''
  for (const [key, spec] of Object.entries(tool.args)) {
    const value = given[key]
    if (value === undefined || value === null) {
      if ('required' in spec && spec.required) fail('usage', `${name}: missing argument "${key}"`, { argument: key })
      continue
    }
    const read = readValue(name, key, spec, value)
    if (read === false) continue
    if (spec.kind === 'text') {
      argv.push(`--${spec.flag}=-`)
      stdin = read as string
    } else argv.push(read === true ? `--${spec.flag}` : `--${spec.flag}=${read}`)
  }
  return { cwd, argv, stdin }
}

function refuseArgument(name: string, key: string, tool: ToolSpec): never {
  const known = ['cwd', ...Object.keys(tool.args)].join(', ')
  const why = PERSONS.has(key)
    ? `"${key}" is the person's to decide (their ~/.pair-loop/config.json, or the pair-loop CLI run by the person)`
    : `"${key}" is not one of its arguments`
  fail('usage', `the tool ${name} takes ${known}; ${why}`, { argument: key, arguments: known.split(', ') })
}

/** `cwd`: an absolute path to an existing directory (the command then checks it is in a git repository). */
function cwdOf(name: string, value: unknown): string {
  if (typeof value !== 'string' || !isAbsolute(value))
    fail('usage', `${name}: "cwd" must be the absolute path of the repository you work in`, { argument: 'cwd' })
  let isDir = false
  try {
    isDir = statSync(value).isDirectory()
  } catch {}
  if (!isDir) fail('git_error', `directory ${value} does not exist`, { cwd: value })
  return value
}

/** The value as its flag takes it, true for a boolean that is set, false for one that is not; `usage` if malformed. */
function readValue(name: string, key: string, spec: ArgSpec, value: unknown): string | number | boolean {
  const wrong = (what: string): never =>
    fail('usage', `${name}: "${key}" must be ${what}, got ${JSON.stringify(value)}`, { argument: key })
  switch (spec.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? value : wrong('true or false')
    case 'integer':
      return Number.isSafeInteger(value) && (value as number) >= spec.min
        ? (value as number)
        : wrong(`a whole number ≥ ${spec.min}`)
    case 'enum':
      return typeof value === 'string' && spec.options.includes(value)
        ? value
        : wrong(`one of ${spec.options.join(', ')}`)
    case 'text':
      return typeof value === 'string' ? value : wrong('a string')
    case 'string':
      if (typeof value !== 'string') return wrong('a string')
      return spec.pattern && !spec.pattern.test(value) ? wrong(`of the form ${spec.pattern.source}`) : value
  }
}

/** The JSON Schema of a tool's arguments, as MCP lists it. */
export function inputSchema(tool: ToolSpec) {
  const properties: Record<string, object> = {
    cwd: { type: 'string', description: 'the absolute path of the git repository you work in' },
  }
  const required = ['cwd']
  for (const [key, spec] of Object.entries(tool.args)) {
    properties[key] = schemaOf(spec)
    if ('required' in spec && spec.required) required.push(key)
  }
  return { type: 'object' as const, properties, required, additionalProperties: false }
}

function schemaOf(spec: ArgSpec): object {
  const { description } = spec
  switch (spec.kind) {
    case 'boolean':
      return { type: 'boolean', description }
    case 'integer':
      return { type: 'integer', minimum: spec.min, description }
    case 'enum':
      return { type: 'string', enum: spec.options, description }
    case 'text':
      return { type: 'string', description }
    case 'string':
      return { type: 'string', description, ...(spec.pattern ? { pattern: spec.pattern.source } : {}) }
  }
}
