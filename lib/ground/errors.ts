// The closed error contract of DESIGN.md: one code, one exit status, one JSON document.

export const ERROR_CODES = {
  usage: {
    exit: 2,
    retryable: false,
    meaning: 'bad or missing flags, malformed run id, missing/empty/oversized/non-UTF-8 body file',
  },
  state_malformed: {
    exit: 3,
    retryable: false,
    meaning: "a run's state file can't be parsed or fails its schema; it is never overwritten",
  },
  duplicate_reply: { exit: 4, retryable: false, meaning: 'that finding already has a reply' },
  config_invalid: {
    exit: 5,
    retryable: false,
    meaning: "config file can't be parsed or fails its schema (path and issues listed)",
  },
  dirty_tree: { exit: 6, retryable: false, meaning: '`start` on uncommitted changes' },
  git_error: { exit: 7, retryable: false, meaning: 'not a repository, unknown base, a git command failed' },
  run_not_found: { exit: 8, retryable: false, meaning: 'no such run, or no active run here' },
  run_active: { exit: 9, retryable: false, meaning: '`start` while this repository has an active run' },
  wrong_phase: {
    exit: 10,
    retryable: false,
    meaning: 'a command out of order (the details say what is expected next)',
  },
  round_cap: { exit: 11, retryable: false, meaning: '`coder-done` past `max_rounds` without `--over-cap`' },
  finding_not_found: { exit: 12, retryable: false, meaning: "`reply` to a finding that doesn't exist" },
  budget_exceeded: {
    exit: 13,
    retryable: false,
    meaning:
      'spent ≥ limit, or usage no price covers under a limit: `budget-check` still prints its normal document; `coder-done` and `review` refuse a new round without `--over-budget`',
  },
  reviewer_unavailable: {
    exit: 14,
    retryable: false,
    meaning: 'neither reviewer CLI is on PATH and no reviewer command is set',
  },
  reviewer_failed: {
    exit: 15,
    retryable: true,
    meaning: 'the reviewer exited non-zero, printed nothing usable, or reported an API, auth or quota error',
  },
  reviewer_timeout: {
    exit: 16,
    retryable: true,
    meaning: 'the reviewer outran its timeout; its whole process group was killed',
  },
  review_in_progress: {
    exit: 17,
    retryable: true,
    meaning:
      'another `review` of this run is running (now only `review --cancel` of a review on another host, or a review whose claim was taken over: a `review` attaches to the one in flight)',
  },
  gh_error: { exit: 18, retryable: true, meaning: '`gh` is missing or a `gh` call failed' },
  config_untrusted: {
    exit: 19,
    retryable: false,
    meaning:
      "the repository's `.pair-loop.json` sets a key that runs a program, moves money, decides what counts or narrows the review (any key, when git does not track it at the base), or a configured command runs an in-tree file, and the person has not trusted this content (`pair-loop trust`)",
  },
  branch_moved: { exit: 20, retryable: false, meaning: "the current branch is not the run's branch" },
  resolve_unconfirmed: {
    exit: 21,
    retryable: true,
    meaning: '`pr-resolve`: GitHub did not confirm the thread resolved after retries',
  },
  head_moved: {
    exit: 22,
    retryable: true,
    meaning: '`pr-check`: the PR head moved while it was being read, twice',
  },
  head_not_approved: {
    exit: 23,
    retryable: false,
    meaning:
      "the PR head's tree (as GitHub reports it) is not the tree the reviewer approved: `finish --create-pr`/`--pr`, `pr-check`, `verify`; the details list the paths that differ",
  },
  internal: { exit: 70, retryable: false, meaning: 'a bug' },
  io_error: {
    exit: 74,
    retryable: false,
    meaning:
      'the disk or `PAIR_LOOP_HOME` refused a read or write (full, read-only, permissions); the previous state is intact',
  },
  locked: { exit: 75, retryable: true, meaning: "the run's lock was still held after a bounded wait" },
  interrupted: {
    exit: 130,
    retryable: true,
    meaning:
      'SIGINT or SIGTERM: the command stopped cleanly and still printed its one document (`review` excepted: a signal ends only its wait, and the review goes on)',
  },
} as const

export type ErrorCode = keyof typeof ERROR_CODES
export type ErrorDetails = Record<string, unknown>

/** The one way a command fails on purpose: a code from the table, a message, and details for machines. */
export class PairLoopError extends Error {
  readonly code: ErrorCode
  readonly details: ErrorDetails
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message)
    this.name = 'PairLoopError'
    this.code = code
    this.details = details
  }
}

export function fail(code: ErrorCode, message: string, details?: ErrorDetails): never {
  throw new PairLoopError(code, message, details)
}

export function isPairLoopError(error: unknown, code?: ErrorCode): error is PairLoopError {
  return error instanceof PairLoopError && (code === undefined || error.code === code)
}

/** Anything that is not a PairLoopError is a bug: it becomes `internal`, with the original message kept. */
export function toPairLoopError(error: unknown): PairLoopError {
  if (error instanceof PairLoopError) return error
  const message = error instanceof Error ? error.message : String(error)
  return new PairLoopError('internal', `internal error: ${message}`, {
    stack: error instanceof Error ? error.stack?.split('\n').slice(0, 6).join('\n') : undefined,
  })
}

export function errorDocument(error: PairLoopError) {
  return {
    version: 1 as const,
    errors: [
      { code: error.code, message: error.message, retryable: ERROR_CODES[error.code].retryable, ...error.details },
    ],
  }
}

export function codeTable() {
  return Object.entries(ERROR_CODES).map(([code, { exit, retryable, meaning }]) => ({ code, exit, retryable, meaning }))
}

/** The `interrupted` error a signal becomes. */
export function interruptedError(signal: AbortSignal, what = 'the command'): PairLoopError {
  const name = typeof signal.reason === 'string' ? signal.reason : 'a signal'
  return new PairLoopError('interrupted', `${what} was stopped by ${name}; nothing half-done was kept`, {
    signal: name,
  })
}
