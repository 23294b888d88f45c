// The run's record in the PR body, for machines (`action.yml` mode verify): an HTML comment GitHub does not show,
// `<!-- pair-loop:record v1 {json} -->`, schema'd and bounded. Whoever opens the PR writes the body, so it is read as
// a claim: verify checks the head against it and the policy against who it names, nothing more.
import { join, relative } from 'node:path'
import * as v from 'valibot'
import { packageRoot } from '../ground/package.ts'
import { VENDORS } from '../run/vendors.ts'
import { OUTCOMES, type ReviewerRound, type RunState } from '../run/state.ts'
import { roundApproved } from '../run/gated-review.ts'

export const RECORD_OPEN = '<!-- pair-loop:record v1 '
const RECORD_CLOSE = ' -->'
/** The JSON's bound: a body forged to hold a huge record is refused before it is parsed. */
export const RECORD_MAX_BYTES = 16 * 1024
const MAX_APPROVALS = 64

export const REVIEWER_KINDS = ['vendor', 'custom', 'builtin'] as const
const Short = v.pipe(v.string(), v.maxLength(256))
const ObjectId = v.pipe(v.string(), v.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/))

export const RecordReviewer = v.object({
  tool: v.pipe(v.string(), v.maxLength(64)),
  kind: v.picklist(REVIEWER_KINDS),
  program: v.optional(Short),
})

export const Approval = v.object({
  round: v.pipe(v.number(), v.integer(), v.minValue(1)),
  tree: ObjectId,
  reviewer: RecordReviewer,
})

export const PrRecord = v.object({
  run_id: Short,
  base_sha: ObjectId,
  base_branch: v.nullable(Short),
  coder: v.picklist(VENDORS),
  /** Every approving round's tree, oldest first: the newest is what may ship. */
  approvals: v.pipe(v.array(Approval), v.maxLength(MAX_APPROVALS)),
  outcome: v.nullable(v.picklist(OUTCOMES)),
  rounds: v.pipe(v.number(), v.integer(), v.minValue(0)),
  cost_usd: v.nullable(v.pipe(v.number(), v.minValue(0))),
})

export type PrRecord = v.InferOutput<typeof PrRecord>
export type RecordReviewer = v.InferOutput<typeof RecordReviewer>

/** Who reviewed, as today's state tells it: claude/codex are a vendor; a command is builtin when it is one of ours. */
export function reviewerOf(
  run: Pick<RunState, 'config'>,
  review: Pick<ReviewerRound, 'tool' | 'kind' | 'program'>,
): RecordReviewer {
  // what the round recorded it ran (issue 33); older rounds are judged from the frozen config below
  if (review.kind)
    return { tool: review.tool, kind: review.kind, ...(review.program ? { program: review.program } : {}) }
  if (review.tool !== 'custom') {
    const bin = run.config?.pair_loop[`${review.tool}_bin`]
    return { tool: review.tool, kind: 'vendor', ...(bin ? { program: bin } : {}) }
  }
  const command = run.config?.pair_loop.reviewer_cmd
  const stub = command && builtinName(command)
  // review/builtin.ts's prefix, not imported: the PR body's chunk stays below the review's (build.config.ts)
  if (stub) return { tool: 'custom', kind: 'builtin', program: `builtin:${stub}` }
  // a --reviewer-cmd on the command line is not kept on the run: a custom reviewer, its program unknown
  return { tool: 'custom', kind: 'custom', ...(command ? { program: command[0]! } : {}) }
}

/** `sh <package>/fixtures/reviewers/NAME.sh` (what `builtin:NAME` runs) → NAME; else null. */
function builtinName(command: readonly string[]): string | null {
  const root = packageRoot()
  const script = command.at(-1)
  if (!root || !script) return null
  const path = relative(join(root.dir, 'fixtures', 'reviewers'), script)
  return /^[\w.-]+\.sh$/.test(path) ? path.slice(0, -'.sh'.length) : null
}

/** The record of a run: its approving rounds (with a tree) in order, and what the PR body's headline says. */
export function recordOf(run: RunState, costUsd: number | null): PrRecord {
  const approvals = run.rounds.flatMap((round) => {
    const review = round.reviewer
    return review && roundApproved(review) && review.tree
      ? [{ round: round.n, tree: review.tree, reviewer: reviewerOf(run, review) }]
      : []
  })
  return {
    run_id: run.run_id,
    base_sha: run.base_sha,
    base_branch: run.base_branch ?? null,
    coder: run.coder,
    approvals: approvals.slice(-MAX_APPROVALS),
    outcome: run.outcome?.verdict ?? null,
    rounds: run.rounds.length,
    cost_usd: costUsd,
  }
}

/** The block: `<` and `>` escaped inside the JSON, so no string in it can close the comment. */
export function renderRecord(record: PrRecord): string {
  const json = JSON.stringify(record).replace(/</g, '\\u003c').replace(/>/g, '\\u003e')
  return `${RECORD_OPEN}${json}${RECORD_CLOSE}`
}

export type RecordReading =
  | { ok: true; record: PrRecord }
  | { ok: false; why: 'missing' | 'several' | 'oversized' | 'malformed'; message: string }

/** The one record a PR body carries; none, several, an oversized or a malformed one is said, never guessed at. */
export function readRecord(body: string): RecordReading {
  const starts = [...body.matchAll(/<!-- pair-loop:record v1 /g)].map((match) => match.index)
  if (starts.length === 0) return { ok: false, why: 'missing', message: 'the PR body carries no pair-loop record' }
  if (starts.length > 1)
    return { ok: false, why: 'several', message: `the PR body carries ${starts.length} pair-loop records, not one` }
  const from = starts[0]! + RECORD_OPEN.length
  const end = body.indexOf(RECORD_CLOSE, from)
  const json = end < 0 ? body.slice(from) : body.slice(from, end)
  if (end < 0 || Buffer.byteLength(json) > RECORD_MAX_BYTES)
    return {
      ok: false,
      why: end < 0 ? 'malformed' : 'oversized',
      message:
        end < 0 ? 'the pair-loop record is not closed' : `the pair-loop record is over ${RECORD_MAX_BYTES} bytes`,
    }
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return { ok: false, why: 'malformed', message: 'the pair-loop record is not JSON' }
  }
  const checked = v.safeParse(PrRecord, parsed)
  if (!checked.success) {
    const issue = checked.issues[0]
    const where = issue.path?.map((item) => String(item.key)).join('.') || 'record'
    return { ok: false, why: 'malformed', message: `the pair-loop record is malformed at ${where}: ${issue.message}` }
  }
  return { ok: true, record: checked.output }
}
