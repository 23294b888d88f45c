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
  if (result.success) return result.output
  const first = result.issues.slice(0, 10)
  const issues = first.map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`)
  const said = first.slice(0, 3).map(inWords).join('; ')
  fail(code, `${path} is not what pair-loop writes there: ${said}${note}`, { path, issues })
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
