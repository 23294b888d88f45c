// Checking parsed JSON against a valibot schema, one way for config and state: the failure names the file and says why.
import * as v from 'valibot'
import { type ErrorCode, fail } from './errors.ts'

/** `json` as the schema's output, or `code` naming `path` and listing (at most 10) issues by their dotted path. */
export function validate<S extends v.GenericSchema>(
  schema: S,
  json: unknown,
  code: ErrorCode,
  path: string,
  note = '',
): v.InferOutput<S> {
  if (Array.isArray(json) && schema.type !== 'array') {
    // valibot's object schemas take an array for an object with no keys: a file that is a list is still wrong
    const issues = ['(root): expected an object, got an array']
    fail(code, `${path}: ${issues[0]}${note}`, { path, issues })
  }
  const result = v.safeParse(schema, json)
  const listAt = result.success ? arrayReadAsObject(json, result.output, []) : null
  if (listAt !== null) {
    // the same rule at any depth: `"replies": []` is not the `{}` it would silently become
    const issues = [`${listAt}: expected an object, got an array`]
    fail(code, `${path}: ${issues[0]}${note}`, { path, issues })
  }
  if (result.success) return result.output
  const first = result.issues.slice(0, 10)
  const issues = first.map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`)
  const said = first.slice(0, 3).map(inWords).join('; ')
  fail(code, `${path} is not what pair-loop writes there: ${said}${note}`, { path, issues })
}

/** The dotted path of the first array in `input` that the schema gave back as an object, or null when there is none. */
function arrayReadAsObject(input: unknown, output: unknown, at: string[]): string | null {
  if (!input || typeof input !== 'object' || !output || typeof output !== 'object') return null
  if (Array.isArray(input) && !Array.isArray(output)) return at.join('.') || '(root)'
  for (const [key, value] of Object.entries(output)) {
    const found = Object.hasOwn(input, key)
      ? arrayReadAsObject((input as Record<string, unknown>)[key], value, [...at, key])
      : null
    if (found !== null) return found
  }
  return null
}

/** One issue as a person reads it: which key, what it should hold, what it holds (the library's sentence stays in the details). */
function inWords(issue: v.BaseIssue<unknown>): string {
  const key = v.getDotPath(issue) ?? 'the whole file'
  if (issue.received === 'undefined') return `${key} is missing`
  return issue.expected ? `${key} should be ${issue.expected}, not ${issue.received}` : `${key} holds ${issue.received}`
}

/** Text as JSON, or `code` naming `path` and the parser's complaint. */
export function parseJson(text: string, code: ErrorCode, path: string, note = ''): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const why = (error as Error).message
    const what = text.trim() ? 'is not valid JSON: cut short, or not JSON at all' : 'is empty'
    fail(code, `${path} ${what}${note}`, { path, issues: [why] })
  }
}
