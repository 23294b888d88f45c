// GitHub through `gh`, every call through one bounded runner: a time limit per call, and retries only where GitHub did
// not do the work (a timeout, a 5xx, 429, a rate-limit 403). Bodies go through files, never argv. Every call names the
// run's repository, pinned at start (lib/ground/github-repo.ts): gh never picks it from the checkout's remotes.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from './errors.ts'
import { withTempDir } from './fsutil.ts'
import { context } from './context.ts'
import { exec, type ExecResult } from './exec.ts'
import { settings } from './settings.ts'
import { type GitHubRepo, repoFlag } from './github-repo.ts'
import { firstLineOf } from './text.ts'

export const ghBin = () => settings().gh

/** Where a gh call runs, and the repository it asks about: the run's checkout and the repository pinned at its start. */
export interface GhTarget {
  cwd: string
  /** Null: the run was started without a GitHub remote; undefined: by a pair-loop that did not pin one. */
  github: GitHubRepo | null | undefined
}

/** A run's gh target. */
export const ghTarget = (run: { repo: string; github?: GitHubRepo | null }): GhTarget => ({
  cwd: run.repo,
  github: run.github,
})

/** One gh call whose failure the caller reads as "nothing learnt" (a lazy look-up): never retried, never an error. */
export const ghTry = (at: GhTarget, args: string[], timeoutMs: number): Promise<ExecResult> =>
  at.github
    ? exec(ghBin(), naming(args, at.github), { cwd: at.cwd, timeoutMs })
    : Promise.resolve({ ok: false, exitCode: null, stdout: '', stderr: 'no GitHub repository pinned' })

/** The pinned repository, or `gh_error` (not retryable) saying why the run has none. */
export function pinnedRepo(at: GhTarget): GitHubRepo {
  if (at.github) return at.github
  fail(
    'gh_error',
    at.github === null
      ? `this run was started without a GitHub remote, so it has no GitHub repository pinned and gh is not asked about one a remote names now; add the remote (\`git remote add origin https://github.com/OWNER/REPO.git\`) and start a new run`
      : 'this run was started by a pair-loop that did not pin its GitHub repository, and gh is not asked about one the remotes name now; start a new run',
    { failure: 'no_repository', retryable: false, repo: at.cwd },
  )
}

/**
 * The call as gh gets it, naming the pinned repository: `--repo HOST/OWNER/NAME` for `gh pr`, and for `gh api` the
 * host (`--hostname`) and owner and name written into the route and the GraphQL fields where pair-loop's code has
 * gh's `{owner}`/`{repo}` placeholders (gh would fill them from the checkout's remotes).
 */
export function naming(args: string[], pinned: GitHubRepo): string[] {
  const [owner, name] = pinned.repo.split('/') as [string, string]
  const fill = (text: string) => text.replaceAll('{owner}', owner).replaceAll('{repo}', name)
  let named: string[]
  if (args[0] === 'pr') named = [...args, '--repo', repoFlag(pinned)]
  else if (args[0] === 'api') {
    named = ['api', '--hostname', pinned.host]
    for (let i = 1; i < args.length; i++) {
      const arg = args[i]!
      const field = /^(\w+)=\{(owner|repo)\}$/.exec(args[i + 1] ?? '')
      if ((arg === '-F' || arg === '-f') && field) {
        named.push('-f', fill(`${field[1]}={${field[2]}}`)) // a string: -F would make a repository named 123 a number
        i++
      } else named.push(arg.startsWith('repos/') ? fill(arg) : arg)
    }
  } else throw new Error(`gh ${args[0]}: no way to name the repository in this call`)
  if (named.some((arg) => !arg.startsWith('query=') && /\{(owner|repo)\}/.test(arg)))
    throw new Error(`gh ${args.join(' ')}: a repository placeholder left for gh to fill`)
  return named
}

/** Why a call failed, as far as retrying goes. */
export type GhFailure = 'timeout' | 'server' | 'rate_limited' | 'network' | 'refused'

/**
 * A timeout or a 5xx may have done the work; a 429 or a rate-limit 403 did not; a network failure (no route, no DNS, a
 * refused connection) never reached GitHub or may have. Anything else (a 4xx, GraphQL's own errors) is an answer.
 */
export function classifyFailure(result: Pick<ExecResult, 'exitCode' | 'stderr' | 'stdout'>): GhFailure {
  if (result.exitCode === null) return 'timeout'
  const said = `${result.stderr}\n${result.stdout}`
  if (/\bHTTP 429\b|rate limit|abuse detection/i.test(said)) return 'rate_limited'
  if (/\bHTTP 5\d\d\b|\b50[234] (Bad Gateway|Service Unavailable|Gateway Time-?out)\b/i.test(said)) return 'server'
  if (/\b(timed? ?out|ETIMEDOUT|ECONNRESET|connection reset)\b/i.test(said)) return 'timeout'
  if (NETWORK.test(said)) return 'network'
  return 'refused'
}

const NETWORK =
  /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|connection refused|no such host|network is unreachable|could not resolve host|unexpected EOF|TLS handshake)\b/i

/** Whether the same call may succeed later: not when gh is missing or GitHub gave an answer (a 4xx other than 429). */
export const isRetryable = (failure: GhFailure | 'missing') => failure !== 'missing' && failure !== 'refused'

export interface GhOptions {
  /** Where it runs and the repository it names. */
  at: GhTarget
  /**
   * A call that may run twice without harm (a read, resolving a thread) is retried after a timeout and a 5xx too; one
   * that posts something only after GitHub refused it (429, rate-limit 403), so nothing is ever posted twice.
   */
  idempotent: boolean
}

const ATTEMPTS = 3

/** The one way pair-loop calls gh: bounded in time, retried only where that is safe; its stdout, or `gh_error`. */
export async function runGh(args: string[], options: GhOptions): Promise<string> {
  const { ghTimeoutMs: timeoutMs, ghRetryMs: waitMs } = settings()
  const named = naming(args, pinnedRepo(options.at))
  let result: ExecResult | undefined
  let failure: GhFailure = 'refused'
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    result = await exec(ghBin(), named, { cwd: options.at.cwd, timeoutMs })
    if (result.ok) return result.stdout
    if (result.exitCode === 127) break // bash's 'command not found'
    failure = classifyFailure(result)
    const retryable =
      failure === 'rate_limited' ||
      (options.idempotent && (failure === 'server' || failure === 'timeout' || failure === 'network'))
    if (!retryable || attempt === ATTEMPTS) break
    context().io.stderr(`pair-loop: gh ${args[0]} ${args[1] ?? ''}: ${failure.replace('_', ' ')}; retrying\n`)
    await new Promise((resolve) => setTimeout(resolve, waitMs * attempt))
  }
  return ghFailed(args, result!, failure, named)
}

/** What gh says when it has no login, or GitHub refused its token. */
const NOT_LOGGED_IN = /\bgh auth login\b|not logged in|HTTP 401\b|Bad credentials/i

function ghFailed(args: string[], result: ExecResult, failure: GhFailure, named: string[]): never {
  const missing = result.exitCode === 127
  const said =
    firstLineOf(result.stderr) ||
    firstLineOf(result.stdout) ||
    (result.exitCode === null ? 'did not finish in time' : `exit ${result.exitCode}`)
  fail(
    'gh_error',
    missing
      ? 'gh is not installed here (or not on PATH): install the GitHub CLI from https://cli.github.com, then run `gh auth login`'
      : NOT_LOGGED_IN.test(`${result.stderr}\n${result.stdout}`)
        ? 'gh is not logged in to GitHub: run `gh auth login`'
        : `gh ${args[0]} ${args[1] ?? ''} failed: ${said}`.replace(/\s+/g, ' '),
    {
      gh_args: named.filter((arg) => !arg.startsWith('body=') && !arg.startsWith('query=')),
      exit: result.exitCode,
      failure: missing ? 'missing' : failure,
      retryable: isRetryable(missing ? 'missing' : failure),
      stderr: result.stderr.slice(0, 2000),
    },
  )
}

/** A JSON body for `gh api --input`, written to a private temp file for the call and removed after it. */
export async function withJsonInput<T>(payload: unknown, use: (file: string) => Promise<T>): Promise<T> {
  return withTempDir('pair-loop-gh-', (dir) => {
    const file = join(dir, 'input.json')
    writeFileSync(file, JSON.stringify(payload), { mode: 0o600 })
    return use(file)
  })
}

/** gh's JSON answer, or `gh_error` naming what was asked. */
export function ghJson(out: string, what: string): unknown {
  try {
    return JSON.parse(out)
  } catch {
    fail('gh_error', `gh ${what} did not answer JSON (got ${JSON.stringify(firstLineOf(out))})`, {
      stdout: out.slice(0, 2000),
    })
  }
}

export interface CreatedPr {
  number: number
  url: string
}

export async function createPr(
  at: GhTarget,
  options: { title: string; bodyFile: string; base: string | null; head: string | null; draft: boolean },
): Promise<CreatedPr> {
  const args = ['pr', 'create', '--title', options.title, '--body-file', options.bodyFile]
  if (options.base) args.push('--base', options.base)
  if (options.head) args.push('--head', options.head)
  if (options.draft) args.push('--draft')
  const out = await runGh(args, { at, idempotent: false })
  const url = out
    .split('\n')
    .map((line) => line.trim())
    .find((line) => /\/pull\/\d+/.test(line))
  if (!url)
    fail('gh_error', `gh pr create did not print a PR URL (got ${JSON.stringify(firstLineOf(out))})`, {
      stdout: out.slice(0, 2000),
    })
  return { number: Number(/\/pull\/(\d+)/.exec(url)![1]), url }
}

/** A comment on the PR's conversation; returns its id and URL. */
export async function commentOnPr(at: GhTarget, pr: number, body: string): Promise<{ id: number; url: string }> {
  return withTempDir('pair-loop-gh-', async (dir) => {
    const bodyFile = join(dir, 'body.md')
    writeFileSync(bodyFile, body, { mode: 0o600 })
    const out = await runGh(
      ['api', '--method', 'POST', `repos/{owner}/{repo}/issues/${pr}/comments`, '-F', `body=@${bodyFile}`],
      { at, idempotent: false },
    )
    const posted = ghJson(out, 'api') as { id?: unknown; html_url?: unknown }
    if (typeof posted.html_url !== 'string')
      fail('gh_error', `gh api did not return the comment's html_url (got ${JSON.stringify(firstLineOf(out))})`, {
        stdout: out.slice(0, 2000),
      })
    return { id: typeof posted.id === 'number' ? posted.id : 0, url: posted.html_url }
  })
}
