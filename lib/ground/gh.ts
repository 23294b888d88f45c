// GitHub through `gh`, every call through one bounded runner: a time limit per call, and retries only where GitHub did
// not do the work (a timeout, a 5xx, 429, a rate-limit 403). Bodies go through files, never argv.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fail } from './errors.ts'
import { withTempDir } from './fsutil.ts'
import { context } from './context.ts'
import { exec, type ExecResult } from './exec.ts'
import { settings } from './settings.ts'
import { firstLineOf } from './text.ts'

export const ghBin = () => settings().gh

/** One gh call whose failure the caller reads as "nothing learnt" (a lazy look-up): never retried, never an error. */
export const ghTry = (cwd: string, args: string[], timeoutMs: number) => exec(ghBin(), args, { cwd, timeoutMs })

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
  cwd: string
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
  let result: ExecResult | undefined
  let failure: GhFailure = 'refused'
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    result = await exec(ghBin(), args, { cwd: options.cwd, timeoutMs })
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
  return ghFailed(args, result!, failure)
}

/** What gh says when it has no login, or GitHub refused its token. */
const NOT_LOGGED_IN = /\bgh auth login\b|not logged in|HTTP 401\b|Bad credentials/i

function ghFailed(args: string[], result: ExecResult, failure: GhFailure): never {
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
      gh_args: args.filter((arg) => !arg.startsWith('body=') && !arg.startsWith('query=')),
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
  cwd: string,
  options: { title: string; bodyFile: string; base: string | null; head: string | null; draft: boolean },
): Promise<CreatedPr> {
  const args = ['pr', 'create', '--title', options.title, '--body-file', options.bodyFile]
  if (options.base) args.push('--base', options.base)
  if (options.head) args.push('--head', options.head)
  if (options.draft) args.push('--draft')
  const out = await runGh(args, { cwd, idempotent: false })
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
export async function commentOnPr(cwd: string, pr: number, body: string): Promise<{ id: number; url: string }> {
  return withTempDir('pair-loop-gh-', async (dir) => {
    const bodyFile = join(dir, 'body.md')
    writeFileSync(bodyFile, body, { mode: 0o600 })
    const out = await runGh(
      ['api', '--method', 'POST', `repos/{owner}/{repo}/issues/${pr}/comments`, '-F', `body=@${bodyFile}`],
      { cwd, idempotent: false },
    )
    const posted = ghJson(out, 'api') as { id?: unknown; html_url?: unknown }
    if (typeof posted.html_url !== 'string')
      fail('gh_error', `gh api did not return the comment's html_url (got ${JSON.stringify(firstLineOf(out))})`, {
        stdout: out.slice(0, 2000),
      })
    return { id: typeof posted.id === 'number' ? posted.id : 0, url: posted.html_url }
  })
}
