// The run state schema: one valibot schema, the types derived from it.
import * as v from 'valibot'
import { Config } from './config.ts'
import { REVIEWER_TOOLS, VENDORS, type Vendor } from './vendors.ts'
import { RUN_ID_PATTERN } from '../ground/paths.ts'
import { PrWatch, SideClaim } from './pr-schema.ts'
import { APPROVERS, SEVERITIES } from './severity-gate.ts'

export const PHASES = ['coding', 'reviewing', 'approved', 'capped', 'finished'] as const
export const VERDICTS = ['APPROVED', 'CHANGES_REQUESTED'] as const
export const OUTCOMES = ['APPROVED', 'CHANGES_REQUESTED', 'ABANDONED'] as const
export const DISPOSITIONS = ['fixed', 'wont-fix', 'question', 'ack'] as const

const Timestamp = v.pipe(v.string(), v.isoTimestamp())
const Count = v.pipe(v.number(), v.integer(), v.minValue(0))
const Usd = v.pipe(v.number(), v.minValue(0))
const FindingId = v.pipe(v.string(), v.regex(/^\d+\.\d+$/))

export const DiffStat = v.object({ files: Count, insertions: Count, deletions: Count })

export const Usage = v.object({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: v.optional(Count, 0),
  cache_read_input_tokens: v.optional(Count, 0),
  cache_write_5m_tokens: v.optional(Count, 0),
  cache_write_1h_tokens: v.optional(Count, 0),
  cached_input_tokens: v.optional(Count, 0),
  reasoning_output_tokens: v.optional(Count, 0),
})

export const Finding = v.object({
  id: FindingId,
  round: v.pipe(Count, v.minValue(1)),
  n: v.pipe(Count, v.minValue(1)),
  key: v.string(),
  category: v.string(),
  severity: v.nullable(v.picklist(SEVERITIES)),
  /** The reviewer's own word when it is not the severity kept (`critical` for blocker): shown beside it. */
  severity_said: v.optional(v.string()),
  path: v.nullable(v.string()),
  line_start: v.nullable(Count),
  line_end: v.nullable(Count),
  text: v.string(),
  recurring: v.boolean(),
  recurring_of: v.nullable(FindingId),
  /** A panel's: every member that raised it (one finding, merged by key). */
  raised_by: v.optional(v.array(v.picklist(REVIEWER_TOOLS))),
})

export const ReviewerCost = v.object({
  usd: v.nullable(Usd),
  source: v.string(),
  models: v.optional(v.record(v.string(), Usd), {}),
  unpriced_models: v.optional(v.array(v.string()), []),
  transcript_usd: v.optional(v.nullable(Usd), null),
  reported_usd: v.optional(v.nullable(Usd), null),
})

/** vendor: claude or codex as the person recorded or start found it; custom: a command; builtin: a stub of pair-loop. */
export const REVIEWER_KINDS = ['vendor', 'custom', 'builtin'] as const
/** Where a run's reviewer program came from: the person's config, or a PATH lookup by `start` (the coder's PATH). */
export const PROGRAM_SOURCES = ['config', 'found at start'] as const
const ReviewerProgram = v.nullable(v.object({ path: v.string(), source: v.picklist(PROGRAM_SOURCES) }))

/** One member of a panel round: its own verdict, session, cost and failure (null verdict: it failed, twice). */
export const PanelMember = v.object({
  tool: v.picklist(REVIEWER_TOOLS),
  verdict: v.nullable(v.picklist(VERDICTS)),
  session_id: v.nullable(v.string()),
  model: v.nullable(v.string()),
  usage: v.nullable(Usage),
  cost: v.nullable(ReviewerCost),
  calls: Count,
  findings_count: Count,
  failure: v.optional(v.object({ code: v.string(), message: v.string() })),
})

export const ReviewerRound = v.object({
  tool: v.picklist(REVIEWER_TOOLS),
  fallback_used: v.boolean(),
  verdict: v.picklist(VERDICTS),
  findings: v.array(Finding),
  summary: v.string(),
  session_id: v.nullable(v.string()),
  model: v.nullable(v.string()),
  usage: v.nullable(Usage),
  cost: v.nullable(ReviewerCost),
  calls: v.optional(Count, 1),
  duration_ms: Count,
  raw_output_path: v.nullable(v.string()),
  over_budget: v.optional(v.boolean(), false),
  at: Timestamp,
  /** Verdict and findings read from a structured answer (the CLI's JSON-schema flag), not from the text grammar. */
  structured: v.optional(v.boolean()),
  /** Every call's session when the round took more than one (a re-ask is a call, and a session, of its own). */
  session_ids: v.optional(v.array(v.string())),
  /** Files the change touched that a reviewer CLI would load from a repository: instructions, settings, hooks. */
  touches_reviewer_instructions: v.optional(v.array(v.string())),
  /** Before snapshots: a hash of the changed entries (no longer compared with anything). */
  fingerprint: v.optional(v.nullable(v.string())),
  /** The snapshot the reviewer saw (lib/snapshot/): git's tree id of exactly those bytes; none for a PR diff or an older run. */
  tree: v.optional(v.nullable(v.string())),
  /** The tree of the files it was shown, in pair-loop's store: the next round's delta starts from it. */
  shown_tree: v.optional(v.nullable(v.string())),
  /** Its session's usage as the CLI last reported it, where that is a running total (codex): the next call counts from it. */
  session_usage: v.optional(v.nullable(Usage)),
  /** What reviewed: a vendor's CLI, a custom command or a stub shipped with pair-loop (an older round: from `tool`). */
  kind: v.optional(v.picklist(REVIEWER_KINDS)),
  /** The program that ran (absolute path), or null when not recorded. */
  program: v.optional(v.nullable(v.string())),
  /** Keys this review raised that the previous review raised too, on files (or a tree) unchanged since: a stalemate's. */
  unchanged_keys: v.optional(v.array(v.string())),
  /** Who made the round count as approved (none: it did not, or a round from before the gate, by its verdict). */
  approved_by: v.optional(v.picklist(APPROVERS)),
  /** The gate a `severity_gate` approval went by (`pair_loop.block_on` of the run): every finding was below it. */
  block_on: v.optional(v.picklist(SEVERITIES)),
  /** A panel's round: each member's own record; the fields above are the first member's identity and the sums. */
  panel: v.optional(v.array(PanelMember)),
  /** The panel's approval rule that made `verdict` from the members' verdicts. */
  approval: v.optional(v.string()),
})

export const CoderRound = v.object({
  summary: v.string(),
  session_id: v.nullable(v.string()),
  diff: v.nullable(DiffStat),
  /** Before snapshots: a hash of the changed entries (no longer compared with anything). */
  fingerprint: v.optional(v.nullable(v.string())),
  /** The snapshot handed over (lib/snapshot/): git's tree id of the working tree's bytes; none for an older run. */
  tree: v.optional(v.nullable(v.string())),
  findings_addressed: v.nullable(Count),
  over_cap: v.boolean(),
  over_budget: v.optional(v.boolean(), false),
  started_at: Timestamp,
  done_at: Timestamp,
})

export const Round = v.object({
  n: v.pipe(Count, v.minValue(1)),
  coder: CoderRound,
  reviewer: v.nullable(ReviewerRound),
  /** A round after the PR was opened (a fix in the PR phase): counted against `pr_max_rounds`, not `max_rounds`. */
  pr_phase: v.optional(v.boolean()),
})

/** One tree a review approved: what may ship, in order (the newest is what the PR head must be). */
export const ApprovedTree = v.object({
  tree: v.string(),
  round: v.pipe(Count, v.minValue(1)),
  reviewer: v.picklist(REVIEWER_TOOLS),
  at: Timestamp,
})

export const Reply = v.object({
  finding: FindingId,
  key: v.string(),
  disposition: v.picklist(DISPOSITIONS),
  body: v.string(),
  at: Timestamp,
  comment_url: v.optional(v.nullable(v.string()), null),
})

export const FailedReview = v.object({
  at: Timestamp,
  round: Count,
  tool: v.picklist(REVIEWER_TOOLS),
  code: v.string(),
  message: v.string(),
  cost: v.nullable(ReviewerCost),
  raw_output_path: v.nullable(v.string()),
  session_id: v.optional(v.nullable(v.string()), null),
})

export const ReviewClaim = v.object({
  pid: v.pipe(v.number(), v.integer()),
  host: v.string(),
  started_at: Timestamp,
  /** When the claiming process started (Linux /proc): a pid reused by another process is not the claimer. */
  pid_start: v.optional(v.nullable(v.string()), null),
  /** No claim outlives its reviewer's timeout (twice: a re-ask) plus a grace, whatever host wrote it. */
  expires_at: v.optional(v.nullable(Timestamp), null),
  /** The reviewer's process group, so a review killed outright does not leave it running: the next one ends it. */
  reviewer_pgid: v.optional(v.nullable(v.pipe(v.number(), v.integer())), null),
  /** When that process started (Linux /proc), so a recycled pid is never mistaken for it. */
  reviewer_start: v.optional(v.nullable(v.string()), null),
  /** The attempt's id (the claim names its detached worker, which owns the reviewer call; lib/review/worker.ts). */
  attempt: v.optional(v.nullable(v.string())),
  /** What the attempt reviews: the loop's round (when absent), or the final round on the pushed PR (`review --pr`). */
  kind: v.optional(v.picklist(['round', 'pr'])),
})

export const BudgetOverride = v.object({
  at: Timestamp,
  command: v.string(),
  round: Count,
  spent_usd: Usd,
  limit_usd: Usd,
})

/** Where the agents' transcripts are, as `start` saw it (each variable resolved, or null when unset). */
export const TranscriptEnv = v.object({
  HOME: v.nullable(v.string()),
  CLAUDE_CONFIG_DIR: v.nullable(v.string()),
  CODEX_HOME: v.nullable(v.string()),
  /** Gemini CLI's (a run started before it was known has none: unset). */
  GEMINI_CLI_HOME: v.optional(v.nullable(v.string()), null),
  XDG_CONFIG_HOME: v.nullable(v.string()),
})

/** The most the ledger ever counted per coder session: USD by round window (its start time), then by model. */
export const HighWater = v.record(v.string(), v.record(v.string(), v.record(v.string(), Usd)))

export const RunState = v.object({
  version: v.literal(1),
  revision: Count,
  run_id: v.pipe(v.string(), v.regex(RUN_ID_PATTERN)),
  task: v.string(),
  repo: v.string(),
  branch: v.string(),
  base_sha: v.pipe(v.string(), v.regex(/^[0-9a-f]{40,64}$/)),
  /** The branch `--base` named, when it named one: the PR's base. */
  base_branch: v.optional(v.nullable(v.string()), null),
  coder: v.picklist(VENDORS),
  reviewer: v.picklist(VENDORS),
  reviewer_fallback: v.boolean(),
  max_rounds: v.pipe(Count, v.minValue(1)),
  budget_usd: v.nullable(Usd),
  phase: v.picklist(PHASES),
  rounds: v.array(Round),
  replies: v.record(v.string(), Reply),
  review_claim: v.nullable(ReviewClaim),
  failed_reviews: v.array(FailedReview),
  budget_overrides: v.array(BudgetOverride),
  outcome: v.nullable(v.object({ verdict: v.picklist(OUTCOMES), finished_at: Timestamp })),
  pr: v.nullable(v.pipe(Count, v.minValue(1))),
  pr_url: v.nullable(v.string()),
  /** `finish --pr N` could not reach GitHub (gh missing, offline): the number is kept, the next pr-check verifies it. */
  pr_unverified: v.optional(v.literal(true)),
  created_at: Timestamp,
  updated_at: Timestamp,
  /** The effective config frozen at `start` (runs started before it existed have none: they read it live). */
  config: v.optional(v.nullable(Config), null),
  /**
   * The GitHub repository of the run's PR, pinned at `start` from the remote the base branch tracks (null: none; runs
   * from before it have none at all): every gh call names it (lib/ground/gh.ts).
   */
  github: v.optional(v.nullable(v.object({ host: v.string(), repo: v.pipe(v.string(), v.regex(/^[^/]+\/[^/]+$/)) }))),
  /** Each vendor CLI's program, resolved once at `start` (null: not found); a review never looks on the caller's PATH. */
  reviewer_programs: v.optional(
    v.nullable(
      v.object({ claude: ReviewerProgram, codex: ReviewerProgram, gemini: v.optional(ReviewerProgram, null) }),
    ),
    null,
  ),
  /** The environment that locates transcripts, frozen at `start` (older runs have none: they use the current one). */
  transcript_env: v.optional(v.nullable(TranscriptEnv)),
  /** Per coder session, the most its transcripts ever showed (lib/cost/high-water.ts): money once seen stays counted. */
  coder_high_water: v.optional(HighWater),
  /** gh side effects in flight, by key (a PR being opened, a reply being posted): see lib/run/claims.ts. */
  claims: v.optional(v.record(v.string(), SideClaim)),
  /** The PR phase: what `pr-check` saw, and what was posted or resolved on the PR (lib/pr/). */
  pr_watch: v.optional(v.nullable(PrWatch)),
  /** The optional final round (`review --pr`) on the pushed PR diff; its findings go on the PR as one review. */
  /** Every tree a review approved, oldest first (a run from before it: derived from its approving review). */
  approved_trees: v.optional(v.array(ApprovedTree)),
  final_review: v.optional(v.nullable(v.object({ review: ReviewerRound, diff_path: v.nullable(v.string()) }))),
})

export type RunState = v.InferOutput<typeof RunState>
export type Round = v.InferOutput<typeof Round>
export type ApprovedTree = v.InferOutput<typeof ApprovedTree>
export type CoderRound = v.InferOutput<typeof CoderRound>
export type ReviewerRound = v.InferOutput<typeof ReviewerRound>
export type Finding = v.InferOutput<typeof Finding>
export type PanelMember = v.InferOutput<typeof PanelMember>
export type Reply = v.InferOutput<typeof Reply>
export type Usage = v.InferOutput<typeof Usage>
export type ReviewerCost = v.InferOutput<typeof ReviewerCost>
export type DiffStat = v.InferOutput<typeof DiffStat>
export type FailedReview = v.InferOutput<typeof FailedReview>
export type BudgetOverride = v.InferOutput<typeof BudgetOverride>
export type Phase = (typeof PHASES)[number]
export type Agent = Vendor
export type Verdict = (typeof VERDICTS)[number]
export type Outcome = (typeof OUTCOMES)[number]
export type ReviewClaim = v.InferOutput<typeof ReviewClaim>
export type TranscriptEnv = v.InferOutput<typeof TranscriptEnv>
export type ReviewerProgram = v.InferOutput<typeof ReviewerProgram>
export type ReviewerKind = (typeof REVIEWER_KINDS)[number]
export type HighWater = v.InferOutput<typeof HighWater>
