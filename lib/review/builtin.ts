// The built-in reviewers: the stub reviewers this package ships (fixtures/reviewers/*.sh), named `builtin:NAME` so
// `review --reviewer-cmd builtin:changes` works in any repository, wherever pair-loop is installed.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../errors.ts'
import { packageRoot } from '../package.ts'
import { closest, didYouMean } from '../suggest.ts'

export const BUILTIN_PREFIX = 'builtin:'

/** The folder of the stubs inside this package, or null when the package is incomplete. */
function stubsDir(): string | null {
  const root = packageRoot()
  const dir = root && join(root.dir, 'fixtures', 'reviewers')
  return dir && existsSync(dir) ? dir : null
}

/** Every built-in reviewer's name (a stub's file name without `.sh`; `_common.sh` is sourced by the others). */
export function builtinReviewerNames(): string[] {
  const dir = stubsDir()
  if (!dir) return []
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sh') && !file.startsWith('_'))
    .map((file) => file.slice(0, -'.sh'.length))
    .sort()
}

/** `builtin:changes` as the command that runs it: `sh <package>/fixtures/reviewers/changes.sh`; else `usage`. */
export function builtinReviewer(value: string): string[] {
  const name = value.slice(BUILTIN_PREFIX.length)
  const names = builtinReviewerNames()
  if (!names.includes(name)) {
    const suggestion = closest(name, names)
    fail(
      'usage',
      `--reviewer-cmd ${value}: no built-in reviewer ${JSON.stringify(name)}${didYouMean(suggestion && `${BUILTIN_PREFIX}${suggestion}`)}; the built-in ones are ${names.map((n) => `${BUILTIN_PREFIX}${n}`).join(', ') || 'missing from this installation'}`,
      {
        flag: '--reviewer-cmd',
        builtin: names,
        ...(suggestion ? { suggestion: `${BUILTIN_PREFIX}${suggestion}` } : {}),
      },
    )
  }
  return ['sh', join(stubsDir()!, `${name}.sh`)]
}
