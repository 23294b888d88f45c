// One review: build the prompt, call the reviewer (re-asking once for a missing verdict), and judge what came back.
import { usageSince } from './continuity.ts'
import { lastShownTree } from '../run/run-queries.ts'
import { snapshotDelta } from '../snapshot/diff.ts'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { context } from '../ground/context.ts'
import { type ErrorCode, type ErrorDetails, isPairLoopError } from '../ground/errors.ts'
import { type Failure, judgeFailure } from './failure.ts'
import { stripControl } from '../ground/text.ts'
import { ANSWER_SCHEMA, parseFindings, parseVerdict, reviewerProse, type ParsedFinding } from '../run/grammar.ts'
import type { CallSpend } from '../cost/review-calls.ts'
import type { ReviewerCost, RunState, Usage, Verdict } from '../run/state.ts'
import { parseReviewerError, parseReviewerOutput } from './output.ts'
import type { ReviewerReply } from '../agents/reply.ts'
import { runReviewerProcess } from './process.ts'
import { reviewedChange, type WorkingDiff } from './diff.ts'
import { emptyReviewerCopy, writeReviewerCopy } from '../snapshot/copy.ts'
import type { RepoSnapshot } from '../snapshot/snapshot.ts'
import { writeNamedOnly } from '../snapshot/named-only.ts'
import { namedOnlyPath } from '../ground/paths.ts'
import { buildPrompt, buildReask, type PromptContext } from './prompt.ts'
import type { ReviewerChoice } from './reviewers.ts'
import type { PersonRules } from './rules.ts'
import { type ReadAnswer, readStructured, structuredObject } from './structured.ts'

/** A call's cost; `startedMs`: when it started (a continued session's transcript holds the earlier calls too). */
export type CostOfCall = (reply: ReviewerReply, tool: ReviewerChoice['tool'], startedMs?: number) => ReviewerCost | null

export interface ConductOptions {
  choice: ReviewerChoice
  maxDiffBytes: number
  timeoutMs: number
  /** Folder for this run's raw reviewer output (kept for audit). */
  artifactsDir: string
  costOf: CostOfCall
  env?: NodeJS.ProcessEnv
  heartbeatMs?: number
  log?: (line: string) => void
  signalRelay?: { kill: (() => void) | null; interrupted?: boolean }
  onSpawn?: (pid: number) => void
  /** What is left of the run's limit before this review (`claude -p --max-budget-usd`); null: no cap. */
  budgetLeftUsd?: number | null
  /**
   * The change to review when it is not the working tree against the base (the final round: the pushed PR's diff), and
   * the tree its head must be (the approved tree): the reviewer's copy is the snapshot only when it is that tree.
   */
  diffSource?: { diff: WorkingDiff; title: string; tree: string | null }
  /** The working tree's change against the base, taken already (the worker begins on it while the run is claimed). */
  change?: ReturnType<typeof reviewedChange> | null
  /** The reviewer's session of the last round to continue (lib/review/continuity.ts), or null for a fresh one. */
  resume?: string | null
  /** That session's usage as its CLI last reported it: a running total is counted from there. */
  resumeBaseline?: Usage | null
  /** Globs of changed paths the reviewer is not shown (`pair_loop.review_exclude`): named as excluded by config. */
  exclude?: readonly string[]
  /** Reads the person's rules file (`pair_loop.review_instructions`) now; its `config_invalid` fails the review. */
  rulesOf?: () => PersonRules | null
}

export interface CallRecord extends CallSpend {
  reply: ReviewerReply | null
  raw_output_path: string
  /** The call's session: the one pair-loop named before it (claude), else the one the reviewer reported (codex). */
  session_id: string | null
  /** The usage as the CLI reported it, when that is the continued session's running total (`usage`: this call's). */
  session_usage?: Usage | null
}

export interface ReviewVerdict {
  verdict: Verdict
  findings: ParsedFinding[]
  summary: string
  reply: ReviewerReply
  /** Read from a structured answer (ANSWER_SCHEMA), not from the text grammar. */
  structured: boolean
  /** Files the change touches that a reviewer CLI would load from a repository (instructions, settings, hooks). */
  touches_reviewer_instructions: string[]
  /** The snapshot reviewed, its tree id (null: not the working tree, e.g. the pushed PR's diff). */
  tree: string | null
  /** The tree of the files shown, in pair-loop's store (null as `tree`). */
  shown_tree: string | null
}

export type Conducted =
  | { ok: true; review: ReviewVerdict; calls: CallRecord[] }
  | { ok: false; code: ErrorCode; message: string; details?: ErrorDetails; calls: CallRecord[] }

export const FORMAT_FINDING =
  'the reviewer gave no `VERDICT:` line, even when asked again; read its raw output and review again'

export async function conductReview(run: RunState, options: ConductOptions): Promise<Conducted> {
  const exclude = options.exclude ?? []
  const change = await (options.change ??
    reviewedChange(run.repo, run.base_sha, options.maxDiffBytes, undefined, exclude))
  let rules: PersonRules | null
  try {
    rules = options.rulesOf?.() ?? null
  } catch (error) {
    if (!isPairLoopError(error)) throw error
    return { ok: false, code: error.code, message: error.message, details: error.details, calls: [] }
  }
  const diff = options.diffSource?.diff ?? change.diff
  const instructions = change.instructions
  // what a review of this tree named only, kept: the PR body of the approved tree names it NOT REVIEWED too
  if (!options.diffSource && diff.tree) writeNamedOnly(namedOnlyPath(run.run_id, diff.tree), diff.unreviewed)
  const since = options.diffSource ? null : lastShownTree(run)
  const shown = options.diffSource ? null : (change.diff.shown_tree ?? null)
  const delta = since && shown ? await snapshotDelta(change.snapshot, since, shown, options.maxDiffBytes) : null
  const prompt = buildPrompt(run, diff, {
    instructions,
    structured: options.choice.structured,
    changeTitle: options.diffSource?.title,
    copy: await reviewerCopy(change.snapshot, options.diffSource, options.choice.copy, exclude),
    delta: delta && since ? { ...delta, since } : null,
    resumed: Boolean(options.resume),
    rules,
  })
  const touches = { touches_reviewer_instructions: instructions.touched, tree: diff.tree, shown_tree: shown }
  const calls: CallRecord[] = []

  const first = await callReviewer(run, prompt, 1, options, calls)
  calls.push(first.record)
  if (first.failure) return { ok: false, ...first.failure, calls }
  const firstText = first.text!
  if (first.answer) return { ok: true, review: { ...first.answer, reply: first.record.reply!, ...touches }, calls }

  options.log?.(`the ${options.choice.tool} reviewer gave no verdict line; asking once more`)
  const second = await callReviewer(run, buildReask(prompt, firstText), 2, options, calls)
  calls.push(second.record)
  if (second.failure) return { ok: false, ...second.failure, calls }
  const secondText = second.text!
  if (second.answer) return { ok: true, review: { ...second.answer, reply: second.record.reply!, ...touches }, calls }

  const findings = parseFindings(secondText)
  findings.push({
    n: findings.length + 1,
    category: 'format',
    severity: 'major',
    path: null,
    line_start: null,
    line_end: null,
    text: FORMAT_FINDING,
  })
  return {
    ok: true,
    review: {
      verdict: 'CHANGES_REQUESTED',
      findings,
      summary: reviewerProse(secondText),
      reply: second.record.reply!,
      structured: false,
      ...touches,
    },
    calls,
  }
}

/**
 * The reviewer's own read-only copy of what it is shown, never the working tree the coder keeps writing: the snapshot,
 * or for another source (the PR's diff) the snapshot when it is the tree that source must be, else an empty folder.
 */
async function reviewerCopy(
  snapshot: RepoSnapshot,
  source: ConductOptions['diffSource'],
  { dir, hidden }: ReviewerChoice['copy'],
  exclude: readonly string[],
): Promise<PromptContext['copy']> {
  if (!source) return writeReviewerCopy(snapshot, dir, undefined, hidden, exclude)
  if (!source.tree || snapshot.tree !== source.tree) {
    emptyReviewerCopy(dir)
    return undefined
  }
  const copy = await writeReviewerCopy(snapshot, dir, undefined, hidden, exclude)
  return { ...copy, what: `the tree the loop approved (${source.tree.slice(0, 12)}: the PR head must be it)` }
}

interface Called {
  record: CallRecord
  text?: string
  /** The verdict it stated: in a structured answer, or in a verdict line of its text; none → ask again. */
  answer?: ReadAnswer & { structured: boolean }
  failure?: Failure
}

async function callReviewer(
  run: RunState,
  prompt: string,
  attempt: number,
  options: ConductOptions,
  earlier: CallRecord[],
): Promise<Called> {
  const { choice } = options
  const round = run.rounds.length
  mkdirSync(options.artifactsDir, { recursive: true })
  mkdirSync(choice.cwd, { recursive: true })
  const stamp = `round-${round}-${context().now()}-${attempt}`
  // a panel's members call at once: each its own file
  const lastMessageFile = join(options.artifactsDir, `${stamp}.${choice.tool}.last-message.txt`)
  const rawPath = join(options.artifactsDir, `${stamp}.${choice.tool}.out`)
  const schemaFile = join(options.artifactsDir, 'answer-schema.json')
  if (choice.structured) writeFileSync(schemaFile, `${JSON.stringify(ANSWER_SCHEMA, null, 2)}\n`)
  const env: NodeJS.ProcessEnv = {
    ...(options.env ?? choice.env), // built, not inherited (lib/review/reviewer-env.ts)
    PAIR_LOOP_RUN_ID: run.run_id,
    PAIR_LOOP_ROUND: String(round),
  }
  for (const name of choice.unsetEnv) delete env[name]
  // a resumed call goes on in the session it names; a fresh one gets a new name (when the CLI takes one)
  const resume = options.resume ?? null
  const sessionId = resume ?? (choice.namesSession ? crypto.randomUUID() : null)
  const left = options.budgetLeftUsd ?? null
  const maxBudgetUsd = left === null ? null : left - earlier.reduce((sum, call) => sum + (call.cost?.usd ?? 0), 0)

  const startedMs = context().now()
  const result = await runReviewerProcess(
    choice.argv({ lastMessageFile, sessionId, schemaFile, maxBudgetUsd, resume }),
    {
      cwd: choice.cwd,
      env,
      input: choice.input(prompt),
      timeoutMs: options.timeoutMs,
      heartbeatMs: options.heartbeatMs,
      onHeartbeat: (elapsed, bytes) =>
        options.log?.(
          `waiting for the ${choice.tool} reviewer: ${Math.round(elapsed / 1000)} s, ${bytes} bytes so far`,
        ),
      signalRelay: options.signalRelay,
      onSpawn: options.onSpawn,
    },
  )
  writeFileSync(rawPath, result.stdout)
  if (result.stderr.length) writeFileSync(`${rawPath}.stderr`, result.stderr)
  const lastMessage = readIfThere(lastMessageFile)
  rmSync(lastMessageFile, { force: true })

  // output past its cap is never parsed: a verdict is only ever read from complete output
  const reply = result.truncated ? null : readReply(result.stdout, lastMessage, result.stderr)
  const session = reply?.session_id ?? sessionId ?? (result.truncated ? threadOfHead(choice, result.stdout) : null)
  // a call killed before it answered (a timeout, a signal) was still paid for: its named transcript says how much
  const reported = reply?.usage ?? null
  // a continued session's running total counts from the last total reported (the call before, or the last round's)
  const totalSince =
    resume && choice.reportsSessionTotal ? (earlier.at(-1)?.session_usage ?? options.resumeBaseline) : null
  const usage = reported && totalSince ? usageSince(reported, totalSince) : reported
  const cost = safeCost(options, { ...(reply ?? silentReply), usage, session_id: session }, startedMs)
  const record: CallRecord = {
    reply,
    usage,
    cost,
    duration_ms: result.durationMs,
    raw_output_path: rawPath,
    session_id: session,
    ...(choice.reportsSessionTotal ? { session_usage: reported } : {}),
  }
  const structured = choice.structured && reply && !reply.error ? readStructured(structuredObject(reply)) : null
  if (choice.structured && reply?.text && !reply.error && !structured)
    options.log?.(`the ${choice.tool} reviewer gave no well-formed structured answer; reading its text instead`)
  // a structured answer states its verdict: judged as a reply that ends in that verdict line, never read as prose
  const judgedReply = structured && reply ? { ...reply, text: `VERDICT: ${structured.verdict}` } : reply
  const failure = judgeFailure(choice.tool, result, judgedReply, options.timeoutMs)
  if (failure) return { record, failure }
  if (structured) return { record, text: stripControl(reply!.text ?? ''), answer: { ...structured, structured: true } }
  const text = stripControl(reply!.text!)
  const verdict = parseVerdict(text)
  const answer = verdict
    ? { verdict, findings: parseFindings(text), summary: reviewerProse(text), structured: false }
    : undefined
  return { record, text, answer }
}

/** Its output read; nothing on stdout: the error it printed on stderr in its CLI's format (gemini's), or none. */
function readReply(stdout: Buffer, lastMessage: string | null, stderr: Buffer): ReviewerReply | null {
  if (stdout.length || lastMessage) return parseReviewerOutput(stdout.toString('utf8'), lastMessage)
  return parseReviewerError(stderr.toString('utf8'))
}

/** The session the first lines of output cut at its cap name (codex's `thread.started`), for the record only. */
function threadOfHead(choice: ReviewerChoice, stdout: Buffer): string | null {
  return choice.sessionInHead(stdout.subarray(0, 64 * 1024).toString('utf8'))
}

/** A call that printed nothing readable: only its session (if named) can tell its cost. */
const silentReply: ReviewerReply = {
  format: 'text',
  text: null,
  error: null,
  session_id: null,
  model: null,
  usage: null,
  reported_usd: null,
}

function safeCost(options: ConductOptions, reply: ReviewerReply, startedMs: number): ReviewerCost | null {
  if (!reply.usage && reply.reported_usd === null && !reply.session_id) return null // nothing to price
  try {
    return options.costOf(reply, options.choice.tool, startedMs)
  } catch (error) {
    options.log?.(`could not cost the reviewer call: ${(error as Error).message}`)
    return null
  }
}

function readIfThere(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}
