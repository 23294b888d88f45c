// One review: build the prompt, call the reviewer (re-asking once for a missing verdict), and judge what came back.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ErrorCode } from '../errors.ts'
import { firstLineOf, stripControl } from '../text.ts'
import { parseFindings, parseVerdict, reviewerProse, type ParsedFinding } from './grammar.ts'
import type { CallSpend } from '../cost/review-calls.ts'
import type { ReviewerCost, RunState, Verdict } from '../state.ts'
import { isBinary, parseReviewerOutput, troubleLine, type ReviewerReply } from './output.ts'
import { runReviewerProcess, type RunResult } from './process.ts'
import { buildPrompt, buildReask, workingDiff } from './prompt.ts'
import type { ReviewerChoice } from './reviewers.ts'

export type CostOfCall = (reply: ReviewerReply, tool: ReviewerChoice['tool']) => ReviewerCost | null

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
}

export interface CallRecord extends CallSpend {
  reply: ReviewerReply | null
  raw_output_path: string
}

export interface ReviewVerdict {
  verdict: Verdict
  findings: ParsedFinding[]
  summary: string
  reply: ReviewerReply
}

export type Conducted =
  | { ok: true; review: ReviewVerdict; calls: CallRecord[] }
  | { ok: false; code: ErrorCode; message: string; calls: CallRecord[] }

export const FORMAT_FINDING =
  'the reviewer gave no `VERDICT:` line, even when asked again; read its raw output and review again'

export async function conductReview(run: RunState, options: ConductOptions): Promise<Conducted> {
  const diff = await workingDiff(run.repo, run.base_sha, options.maxDiffBytes)
  const prompt = buildPrompt(run, diff)
  const calls: CallRecord[] = []

  const first = await callReviewer(run, prompt, 1, options)
  calls.push(first.record)
  if (first.failure) return { ok: false, ...first.failure, calls }
  const firstText = first.text!
  const firstVerdict = parseVerdict(firstText)
  if (firstVerdict) return { ok: true, review: judged(firstVerdict, firstText, first.record.reply!), calls }

  options.log?.(`the ${options.choice.tool} reviewer gave no verdict line; asking once more`)
  const second = await callReviewer(run, buildReask(prompt, firstText), 2, options)
  calls.push(second.record)
  if (second.failure) return { ok: false, ...second.failure, calls }
  const secondText = second.text!
  const secondVerdict = parseVerdict(secondText)
  if (secondVerdict) return { ok: true, review: judged(secondVerdict, secondText, second.record.reply!), calls }

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
    review: { verdict: 'CHANGES_REQUESTED', findings, summary: reviewerProse(secondText), reply: second.record.reply! },
    calls,
  }
}

function judged(verdict: Verdict, text: string, reply: ReviewerReply): ReviewVerdict {
  return { verdict, findings: parseFindings(text), summary: reviewerProse(text), reply }
}

interface Called {
  record: CallRecord
  text?: string
  failure?: { code: ErrorCode; message: string }
}

async function callReviewer(run: RunState, prompt: string, attempt: number, options: ConductOptions): Promise<Called> {
  const { choice } = options
  const round = run.rounds.length
  mkdirSync(options.artifactsDir, { recursive: true })
  const stamp = `round-${round}-${Date.now()}-${attempt}`
  const lastMessageFile = join(options.artifactsDir, `${stamp}.last-message.txt`)
  const rawPath = join(options.artifactsDir, `${stamp}.${choice.tool}.out`)
  const env = { ...(options.env ?? process.env), PAIR_LOOP_RUN_ID: run.run_id, PAIR_LOOP_ROUND: String(round) }

  const result = await runReviewerProcess(choice.argv(lastMessageFile), {
    cwd: run.repo,
    env,
    input: prompt,
    timeoutMs: options.timeoutMs,
    heartbeatMs: options.heartbeatMs,
    onHeartbeat: (elapsed, bytes) =>
      options.log?.(`waiting for the ${choice.tool} reviewer: ${Math.round(elapsed / 1000)} s, ${bytes} bytes so far`),
    signalRelay: options.signalRelay,
    onSpawn: options.onSpawn,
  })
  writeFileSync(rawPath, result.stdout)
  if (result.stderr.length) writeFileSync(`${rawPath}.stderr`, result.stderr)
  const lastMessage = readIfThere(lastMessageFile)
  rmSync(lastMessageFile, { force: true })

  const stdout = result.stdout.toString('utf8')
  const reply = result.stdout.length || lastMessage ? parseReviewerOutput(stdout, lastMessage) : null
  const cost = reply ? safeCost(options, reply) : null
  const record: CallRecord = {
    reply,
    usage: reply?.usage ?? null,
    cost,
    duration_ms: result.durationMs,
    raw_output_path: rawPath,
  }
  const failure = judgeFailure(choice.tool, result, reply, options.timeoutMs)
  if (failure) return { record, failure }
  return { record, text: stripControl(reply!.text!) }
}

function safeCost(options: ConductOptions, reply: ReviewerReply): ReviewerCost | null {
  try {
    return options.costOf(reply, options.choice.tool)
  } catch (error) {
    options.log?.(`could not cost the reviewer call: ${(error as Error).message}`)
    return null
  }
}

/** Everything that is not a review: a timeout, a failed exit, the reviewer's own error, nothing usable. Never a verdict. */
export function judgeFailure(
  tool: string,
  result: RunResult,
  reply: ReviewerReply | null,
  timeoutMs: number,
): { code: ErrorCode; message: string } | null {
  const said = firstLineOf(result.stderr.toString('utf8'))
  if (result.timedOut)
    return {
      code: 'reviewer_timeout',
      message: `the ${tool} reviewer outran its ${Math.round(timeoutMs / 1000)} s timeout; its process group was killed`,
    }
  if (reply?.error)
    return {
      code: 'reviewer_failed',
      message: `the ${tool} reviewer reported an error: ${stripControl(reply.error)
        .replace(/\s*\n\s*/g, ' ')
        .trim()
        .slice(0, 500)}`,
    }
  if (result.exitCode !== 0) {
    const why =
      result.exitCode === null
        ? result.signal
          ? `was killed by ${result.signal}`
          : `could not be started${said ? ` (${said})` : ''}`
        : `exited with status ${result.exitCode}`
    const trouble = troubleLine(result.stdout.toString('utf8')) ?? troubleLine(result.stderr.toString('utf8'))
    return {
      code: 'reviewer_failed',
      message: `the ${tool} reviewer ${why}${trouble ? `: ${trouble}` : said ? `: ${said}` : ''}`,
    }
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
      return {
        code: 'reviewer_failed',
        message: `the ${tool} reviewer reported a problem instead of a review: ${trouble}`,
      }
  }
  return null
}

function readIfThere(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}
