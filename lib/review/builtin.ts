// The built-in reviewers: the stub reviewers this package ships (fixtures/reviewers/*.sh), named `builtin:NAME` so
// `review --reviewer-cmd builtin:changes` works in any repository, wherever pair-loop is installed.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from '../ground/errors.ts'
import { packageRoot } from '../ground/package.ts'
import { closest, didYouMean } from '../ground/suggest.ts'

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

/** The stubs a person tries the loop with; the others stand in for failures in pair-loop's own tests. */
export const PEOPLE_STUBS: Record<string, string> = {
  approve: 'approves',
  changes: 'asks for the same two changes every time',
}

/** `builtin:changes` as the command that runs it: `sh <package>/fixtures/reviewers/changes.sh`; else `usage`. */
export function builtinReviewer(value: string): string[] {
  const name = value.slice(BUILTIN_PREFIX.length)
  const names = builtinReviewerNames()
  if (!names.includes(name)) unknownBuiltin(value, name, names)
  return ['sh', join(stubsDir()!, `${name}.sh`)]
}

/** The faults an error names as examples of the rest (the details list them all). */
const FAULTS_NAMED = ['hang', 'quota']

/** `usage` naming the stubs a person uses, and the test faults apart (a few named, all in the details). */
function unknownBuiltin(value: string, name: string, names: string[]): never {
  const suggestion = closest(name, names)
  const stubs = names.filter((stub) => Object.hasOwn(PEOPLE_STUBS, stub))
  const faults = names.filter((stub) => !Object.hasOwn(PEOPLE_STUBS, stub))
  const shown = (stub: string) => `${BUILTIN_PREFIX}${stub} (${PEOPLE_STUBS[stub]})`
  const others =
    faults.length > 0
      ? `; the other ${faults.length} are faults for pair-loop's own tests (${faults
          .filter((stub) => FAULTS_NAMED.includes(stub))
          .map((stub) => BUILTIN_PREFIX + stub)
          .join(', ')}, …), listed in fixtures/reviewers/README.md`
      : ''
  const known =
    names.length === 0
      ? 'the built-in ones are missing from this installation'
      : `use ${stubs.map(shown).join(' or ')}${others}`
  fail(
    'usage',
    `--reviewer-cmd ${value}: no built-in reviewer ${JSON.stringify(name)}${didYouMean(suggestion && `${BUILTIN_PREFIX}${suggestion}`)}; ${known}`,
    {
      flag: '--reviewer-cmd',
      builtin: names,
      stubs,
      faults,
      ...(suggestion ? { suggestion: `${BUILTIN_PREFIX}${suggestion}` } : {}),
    },
  )
}
