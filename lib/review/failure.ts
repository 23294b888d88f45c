// Judging what came back from a reviewer call that is not a review: a timeout, a failed exit, the reviewer's own
// error, output past its cap, nothing usable. A failure is never a verdict.
import type { ErrorCode, ErrorDetails } from '../ground/errors.ts'
import { firstLineOf, stripControl } from '../ground/text.ts'
import { parseVerdict } from '../run/grammar.ts'
import { isBinary, troubleLine } from './output.ts'
import type { ReviewerReply } from '../agents/reply.ts'
import type { RunResult } from './process.ts'

/** Not a review: the error's code and message, and details for machines (`reason: "output_too_large"`). */
export interface Failure {
  code: ErrorCode
  message: string
  details?: ErrorDetails
}

/** Everything that is not a review: a timeout, a failed exit, the reviewer's own error, nothing usable. Never a verdict. */
export function judgeFailure(
  tool: string,
  result: RunResult,
  reply: ReviewerReply | null,
  timeoutMs: number,
): Failure | null {
  const said = firstLineOf(result.stderr.toString('utf8'))
  if (result.truncated)
    return {
      code: 'reviewer_failed',
      message: `the ${tool} reviewer's output was too large: more than ${sizeOf(result.maxOutputBytes ?? result.stdout.length)}, so it was stopped and not read for a verdict`,
      details: { reason: 'output_too_large' },
    }
  if (result.timedOut)
    return {
      code: 'reviewer_timeout',
      message: `the ${tool} reviewer outran its ${Math.round(timeoutMs / 1000)} s timeout; its process group was killed`,
    }
  if (reply?.error)
    return honest({
      code: 'reviewer_failed',
      message: `the ${tool} reviewer reported an error: ${stripControl(reply.error)
        .replace(/\s*\n\s*/g, ' ')
        .trim()
        .slice(0, 500)}`,
    })
  if (result.exitCode === null && !result.signal)
    return {
      code: 'reviewer_unavailable',
      message: `the ${tool} reviewer could not be started${said ? ` (${said})` : ''}: check the command or install its CLI`,
    }
  if (result.exitCode !== 0) {
    const why =
      result.exitCode === null
        ? result.signal
          ? `was killed by ${result.signal}`
          : `could not be started${said ? ` (${said})` : ''}`
        : `exited with status ${result.exitCode}`
    const trouble = troubleLine(result.stdout.toString('utf8')) ?? troubleLine(result.stderr.toString('utf8'))
    return honest({
      code: 'reviewer_failed',
      message: `the ${tool} reviewer ${why}${trouble ? `: ${trouble}` : said ? `: ${said}` : ''}`,
    })
  }
  if (!reply?.text?.trim())
    return {
      code: 'reviewer_failed',
      message: `the ${tool} reviewer printed nothing usable${said ? ` (stderr: ${said})` : ''}`,
    }
  if (reply.format === 'text' && isBinary(result.stdout) && !parseVerdict(stripControl(reply.text))) {
    return {
      code: 'reviewer_failed',
      message: `the ${tool} reviewer printed binary output (invalid UTF-8 or NUL bytes), not a review`,
    }
  }
  if (!parseVerdict(stripControl(reply.text))) {
    const trouble = troubleLine(reply.text)
    if (trouble && reply.text.length < 2_000)
      return honest({
        code: 'reviewer_failed',
        message: `the ${tool} reviewer reported a problem instead of a review: ${trouble}`,
      })
  }
  return null
}

const AUTH_TROUBLE =
  /\b401\b|unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|api[ _-]?key not valid|authentication[_ ]error|not logged in|please (log|sign) in/i

/** claude -p stopped by `--max-budget-usd` (what is left of the run's limit): `error_max_budget_usd`. */
const BUDGET_TROUBLE = /reached maximum budget|error_max_budget_usd/i

/**
 * `retryable` is honest: running the same review again cannot fix a rejected key or a logged-out CLI, nor a call
 * stopped at the run's money left (the same cap stops it again: the person raises the limit or says go on).
 */
function honest(failure: Failure): Failure {
  if (AUTH_TROUBLE.test(failure.message))
    return { ...failure, details: { ...failure.details, retryable: false, reason: 'auth' } }
  if (BUDGET_TROUBLE.test(failure.message))
    return { ...failure, details: { ...failure.details, retryable: false, reason: 'budget' } }
  return failure
}

const sizeOf = (bytes: number) => (bytes % 1_048_576 === 0 ? `${bytes / 1_048_576} MiB` : `${bytes} bytes`)
