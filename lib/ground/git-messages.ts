// git's failures in the person's words: what is wrong with their repository and what to do about it, instead of git's
// own text wherever the case is known ("Needed a single revision" becomes "the repository has no commit yet").
import { fail } from './errors.ts'
import { firstLineOf } from './text.ts'

export interface GitFailure {
  exitCode: number | null
  stderr: string
}

/** git's answer when HEAD (or a rev) names no commit: in a fresh repository, that there is none yet. */
const NO_COMMIT = /does not have any commits yet|Needed a single revision|unknown revision|ambiguous argument 'HEAD/i

/** The cases a person can fix, each with what to tell them. */
const KNOWN: Array<[RegExp, (cwd: string) => string]> = [
  [/not a git repository/i, (cwd) => notARepository(cwd)],
  [
    /dubious ownership/i,
    (cwd) =>
      `git refuses to work in ${cwd} because another user owns it: if you trust it, run \`git config --global --add safe.directory ${cwd}\``,
  ],
  [
    /index\.lock'?: File exists/i,
    (cwd) =>
      `another git command is working in ${cwd} (.git/index.lock exists): let it finish, or delete .git/index.lock if none is running`,
  ],
  [/ENOENT|command not found|spawn git/i, () => 'git is not installed or not on PATH: install git and try again'],
]

export const notARepository = (cwd: string) =>
  `${cwd} is not inside a git repository: run pair-loop in your repository, or give --cwd <repository>`

export const NO_COMMIT_YET = 'the repository has no commit yet: make one first'

/** `git_error` for a failed call: the known case in plain words, else the subcommand and git's first line. */
export function gitFailed(cwd: string, args: string[], result: GitFailure, stdout = ''): never {
  const details = { command: ['git', ...args].join(' '), exit: result.exitCode, stderr: result.stderr.slice(0, 2000) }
  const known = KNOWN.find(([pattern]) => pattern.test(result.stderr))
  if (known) fail('git_error', known[1](cwd), { cwd, ...details })
  const named = args.filter((arg) => !/^-|=/.test(arg)).slice(0, 2) // past global options: the subcommand
  const said = firstLineOf(result.stderr) || firstLineOf(stdout) || `exit ${result.exitCode ?? 'by signal'}`
  return fail('git_error', `git ${named.join(' ')} failed in ${cwd}: ${said}`, details)
}

/** HEAD names no commit: a repository with no commit yet, or one of the known cases. */
export function headFailed(cwd: string, args: string[], result: GitFailure): never {
  if (NO_COMMIT.test(result.stderr)) fail('git_error', NO_COMMIT_YET, { cwd, fix: 'git commit' })
  return gitFailed(cwd, args, result)
}

/** `--base` names nothing git knows. */
export function unknownBase(cwd: string, rev: string, result: GitFailure): never {
  if (!NO_COMMIT.test(result.stderr)) gitFailed(cwd, ['rev-parse', rev], result)
  return fail(
    'git_error',
    `unknown base ${JSON.stringify(rev)}: no commit, branch or tag of that name in ${cwd}; give --base one that exists`,
    { flag: '--base', base: rev },
  )
}
