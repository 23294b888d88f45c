// The run's phase moves, each a pure function of the state and its input with its guard beside it.
// A move returns the state to write (or none: a replay changes nothing) and its result; the input is never changed.
// Scripts call them inside `changeRun(id, (state) => move(state, input))`; nothing else assigns a phase.
import { dropClaim, PR_CREATE_KEY, replyPostKey } from './claims.ts'
import { fail } from '../ground/errors.ts'
import type { ParsedFinding } from './grammar.ts'
import { askingFor, askPrRoundCap, askRoundCap } from './ask.ts'
import {
  allFindings,
  approvedTrees,
  inPrPhase,
  nextFields,
  nextStep,
  numberFindings,
  prMaxRounds,
  prRoundOpen,
  prRounds,
  replyKey,
} from './run-queries.ts'
import type {
  BudgetOverride,
  CoderRound,
  FailedReview,
  Finding,
  Outcome,
  Phase,
  Reply,
  ReviewerRound,
  RunState,
} from './state.ts'
import type { Step } from './store.ts'
import { context } from '../ground/context.ts'
import { gated } from './gated-review.ts'

const changed = <T>(state: RunState, result: T): Step<T> => ({ state, result })
const unchanged = <T>(result: T): Step<T> => ({ result })

/** A command out of order is `wrong_phase`, saying which phase it needs and what to run instead. */
export function expectPhase(run: RunState, allowed: Phase[], command: string): void {
  if (allowed.includes(run.phase)) return
  const next = nextStep(run)
  fail(
    'wrong_phase',
    `${command} needs phase ${allowed.join(' or ')}, but run ${run.run_id} is ${run.phase}${next ? `; run \`${next}\` next` : ''}`,
    { run_id: run.run_id, phase: run.phase, expected_phase: allowed, ...nextFields(run) },
  )
}

// ---------------------------------------------------------------- start

export type NewRunInput = Pick<
  RunState,
  | 'run_id'
  | 'task'
  | 'repo'
  | 'branch'
  | 'base_sha'
  | 'base_branch'
  | 'coder'
  | 'reviewer'
  | 'max_rounds'
  | 'budget_usd'
  | 'config'
> & { now: string } & Partial<Pick<RunState, 'reviewer_programs'>>

/** A run begins in `coding`, with nothing recorded yet. */
export function newRun({ now, ...input }: NewRunInput): RunState {
  return {
    version: 1,
    revision: 1,
    reviewer_programs: null,
    ...input,
    reviewer_fallback: false,
    phase: 'coding',
    rounds: [],
    replies: {},
    review_claim: null,
    failed_reviews: [],
    budget_overrides: [],
    outcome: null,
    pr: null,
    pr_url: null,
    created_at: now,
    updated_at: now,
  }
}

// ---------------------------------------------------------------- coder-done

/**
 * A new round needs phase coding (or capped, with the person's --over-cap), and room under max_rounds. Approved, or
 * finished with its PR open (the PR phase): only a change the newest approving review did not see is handed over.
 * A round of the PR phase counts against pr_max_rounds instead.
 */
export function checkCanOpenRound(run: RunState, overCap: boolean, changedSinceReview = false): void {
  const again: Phase[] = run.phase === 'finished' && inPrPhase(run) ? ['finished'] : ['approved']
  if (run.phase === 'finished' && inPrPhase(run) && !changedSinceReview)
    fail(
      'wrong_phase',
      `coder-done has nothing to hand over: run ${run.run_id}'s PR is open and the working tree is its newest approved tree; make the fix, then run coder-done again`,
      { run_id: run.run_id, phase: run.phase, changed_since_review: false, ...nextFields(run) },
    )
  expectPhase(run, changedSinceReview ? ['coding', 'capped', ...again] : ['coding', 'capped'], 'coder-done')
  if (isPrRound(run)) {
    if (prRounds(run) + 1 > prMaxRounds(run) && !overCap)
      fail(
        'round_cap',
        `run ${run.run_id} has used its ${prMaxRounds(run)} rounds after the PR (pr_max_rounds); ask the person, then pass --over-cap to go on`,
        {
          run_id: run.run_id,
          pr_max_rounds: prMaxRounds(run),
          pr_rounds: prRounds(run),
          ...askingFor(askPrRoundCap()),
        },
      )
    return
  }
  if (run.rounds.length + 1 > run.max_rounds && !overCap) {
    fail(
      'round_cap',
      `run ${run.run_id} has used its ${run.max_rounds} rounds; ask the person, then pass --over-cap to go on`,
      { run_id: run.run_id, max_rounds: run.max_rounds, rounds: run.rounds.length, ...askingFor(askRoundCap()) },
    )
  }
}

export type OpenRoundInput = Pick<
  CoderRound,
  'summary' | 'session_id' | 'diff' | 'tree' | 'findings_addressed' | 'over_cap'
> & {
  /** The person chose to go on at or over the budget (`--over-budget`): recorded on the run. */
  override: BudgetOverride | null
  /** An approved run's tree is no longer what its approving review saw (lib/snapshot/). */
  changed_since_review?: boolean
  now: string
}

/** The round to open is the PR phase's: a finished run with its PR open, or one such round already under way. */
const isPrRound = (run: RunState) => (run.phase === 'finished' && inPrPhase(run)) || prRoundOpen(run)

/**
 * The coder hands its round to the reviewer: the round is recorded and the phase moves to `reviewing`. A finished run
 * whose PR is open is reopened so (its outcome kept until the round ends): a fix after the PR is a round like any.
 */
export function openRound(run: RunState, input: OpenRoundInput): Step<RunState> {
  checkCanOpenRound(run, input.over_cap, input.changed_since_review)
  const next = structuredClone(run)
  const n = next.rounds.length + 1
  const prPhase = isPrRound(run)
  const coder: CoderRound = {
    summary: input.summary,
    session_id: input.session_id,
    diff: input.diff,
    ...(input.tree ? { tree: input.tree } : {}),
    findings_addressed: input.findings_addressed,
    over_cap: prPhase ? prRounds(run) + 1 > prMaxRounds(run) : n > next.max_rounds,
    over_budget: input.override !== null,
    started_at: next.rounds.at(-1)?.reviewer?.at ?? next.created_at,
    done_at: input.now,
  }
  next.rounds.push({ n, coder, reviewer: null, ...(prPhase ? { pr_phase: true } : {}) })
  if (input.override) next.budget_overrides.push({ ...input.override, round: n })
  next.phase = 'reviewing'
  return changed(next, next)
}

// ---------------------------------------------------------------- review

export type ReviewInput = Omit<ReviewerRound, 'findings'> & { findings: ParsedFinding[] }

/**
 * The review goes on the current round and the phase moves: approved (by the reviewer, or by the severity gate when
 * every finding is below the run's `block_on`: the verdict kept as said), capped at max_rounds, or back to coding.
 * Only the review that holds the claim records (`pid`): one that was taken over is `review_in_progress`.
 */
export function applyReview(run: RunState, input: { review: ReviewInput; pid: number }): Step<RunState> {
  expectPhase(run, ['reviewing'], 'review')
  if (run.review_claim?.pid !== input.pid)
    fail('review_in_progress', `another review took over run ${run.run_id}; this one's result was not recorded`, {
      run_id: run.run_id,
    })
  const next = structuredClone(run)
  const round = next.rounds.at(-1)!
  round.reviewer = gated(next, { ...input.review, findings: numberFindings(next, round.n, input.review.findings) })
  if (input.review.fallback_used) next.reviewer_fallback = true
  next.review_claim = null
  const approved = round.reviewer.approved_by !== undefined
  if (approved && input.review.tree)
    next.approved_trees = [
      ...approvedTrees(run),
      { tree: input.review.tree, round: round.n, reviewer: input.review.tool, at: input.review.at },
    ]
  // a PR-phase round: approved, the run is back in the PR phase (the agent pushes); else its own cap, pr_max_rounds
  if (round.pr_phase) next.phase = approved ? 'finished' : prRounds(next) >= prMaxRounds(next) ? 'capped' : 'coding'
  else next.phase = approved ? 'approved' : next.rounds.length >= next.max_rounds ? 'capped' : 'coding'
  return changed(next, next)
}

/**
 * The final round (`review --pr`) asked for changes: like any review's, its findings open a coder round. It goes on the
 * run as the loop's next round (its coder side the pushed PR, as a whole) and the run is back in `coding` (`capped` at
 * max_rounds), its outcome open again until the next `finish`.
 */
export function reopenForFinalRound(run: RunState, input: { review: ReviewerRound; now: string }): Step<RunState> {
  expectPhase(run, ['finished'], 'review --pr')
  const next = structuredClone(run)
  const n = next.rounds.length + 1
  const coder: CoderRound = {
    summary: `The pushed PR${next.pr === null ? '' : ` #${next.pr}`}, reviewed as a whole against its base (the final round).`,
    session_id: null,
    diff: null,
    tree: null,
    findings_addressed: null,
    over_cap: n > next.max_rounds,
    over_budget: input.review.over_budget ?? false,
    started_at: next.rounds.at(-1)?.reviewer?.at ?? next.created_at,
    done_at: input.now,
  }
  next.rounds.push({ n, coder, reviewer: input.review })
  if (input.review.fallback_used) next.reviewer_fallback = true
  next.phase = next.rounds.length >= next.max_rounds ? 'capped' : 'coding'
  next.outcome = null
  return changed(next, next)
}

/** A failed attempt stays on the run (it was paid for); the run stays in `reviewing`, ready for the same command. */
export function recordFailedReview(run: RunState, input: { failure: Omit<FailedReview, 'round'>; pid: number }) {
  const next = structuredClone(run)
  next.failed_reviews.push({ ...input.failure, round: next.rounds.length })
  if (next.review_claim?.pid === input.pid) next.review_claim = null
  return changed(next, undefined)
}

// ---------------------------------------------------------------- reply

/**
 * The finding must exist and have no reply yet. With --post-pr a reply recorded but not yet posted
 * (a gh failure, or the run finished since) is returned instead: that is how a failed post is retried.
 * The PR usually exists only once the run is finished, so --post-pr also answers on a finished run.
 */
export function checkReply(
  run: RunState,
  findingId: string,
  postPr: boolean,
): { finding: Finding; existing: Reply | null } {
  expectPhase(
    run,
    postPr ? ['coding', 'reviewing', 'approved', 'capped', 'finished'] : ['coding', 'reviewing', 'approved', 'capped'],
    'reply',
  )
  if (postPr && run.pr === null) {
    fail(
      'usage',
      `run ${run.run_id} has no PR recorded; open one with \`finish --create-pr\` or record it with \`finish --pr N\` first`,
      { flag: '--post-pr', run_id: run.run_id },
    )
  }
  const finding = allFindings(run).find((f) => f.id === findingId)
  if (!finding) {
    fail('finding_not_found', `run ${run.run_id} has no finding ${findingId}`, {
      run_id: run.run_id,
      finding: findingId,
      known: allFindings(run).map((f) => f.id),
    })
  }
  const existing = run.replies[findingId] ?? null
  if (existing && !(postPr && existing.comment_url === null)) {
    fail('duplicate_reply', `finding ${findingId} already has a reply (${existing.disposition}, ${existing.at})`, {
      run_id: run.run_id,
      key: replyKey(run, findingId),
      recorded: existing,
    })
  }
  return { finding, existing }
}

export interface ReplyInput {
  finding: string
  disposition: Reply['disposition']
  body: string
  post_pr: boolean
  now: string
}

/** The coder's answer to one finding, once; an answer recorded but not yet posted is returned for posting. */
export function recordReply(run: RunState, input: ReplyInput): Step<Reply> {
  const { finding, existing } = checkReply(run, input.finding, input.post_pr)
  if (existing) return unchanged(existing)
  const reply: Reply = {
    finding: finding.id,
    key: finding.key,
    disposition: input.disposition,
    body: input.body,
    at: input.now,
    comment_url: null,
  }
  const next = structuredClone(run)
  next.replies[finding.id] = reply
  return changed(next, reply)
}

/** Where the reply was posted on the PR, so it is never posted twice; the post's claim goes. */
export function notePostedReply(run: RunState, input: { finding: string; url: string; pid?: number }): Step<undefined> {
  const next =
    dropClaim(run, { key: replyPostKey(input.finding), pid: input.pid ?? context().pid }) ?? structuredClone(run)
  next.replies[input.finding] = { ...next.replies[input.finding]!, comment_url: input.url }
  return changed(next, undefined)
}

// ---------------------------------------------------------------- finish

/** APPROVED only after an approving review; a finished run keeps the verdict it was closed with. */
/**
 * The verdict may close the run: APPROVED only in phase approved, and (`changedSinceReview`) only while the working
 * tree is still, byte for byte, the change the approving review saw.
 */
export function checkVerdict(run: RunState, verdict: Outcome, changedSinceReview = false): void {
  if (run.phase === 'finished') {
    if (run.outcome?.verdict !== verdict) {
      fail(
        'wrong_phase',
        `run ${run.run_id} is already finished as ${run.outcome?.verdict}; a later finish may only add --pr or --create-pr`,
        { run_id: run.run_id, phase: run.phase, recorded_verdict: run.outcome?.verdict, next: null },
      )
    }
    return
  }
  if (verdict !== 'APPROVED') return
  expectPhase(run, ['approved'], 'finish --verdict APPROVED')
  if (changedSinceReview)
    fail(
      'wrong_phase',
      `the working tree of run ${run.run_id} changed since round ${run.rounds.length}'s approving review, so the reviewer has not seen what would ship; hand it over with \`pair-loop coder-done\` and run \`pair-loop review\` (or put back what was approved)`,
      { run_id: run.run_id, phase: run.phase, changed_since_review: true, next: 'coder-done' },
    )
}

/**
 * Close the run with its verdict (and the PR number, if given); a replay of the same finish changes nothing. A recorded
 * PR is changed only with `replace_pr`, and the URL recorded with it goes with it (number and URL always agree).
 */
export function closeRun(
  run: RunState,
  input: { verdict: Outcome; pr: number | null; replace_pr?: boolean; changed_since_review?: boolean; now: string },
): Step<RunState> {
  checkVerdict(run, input.verdict, input.changed_since_review)
  if (input.pr !== null && run.pr !== null && input.pr !== run.pr && !input.replace_pr)
    fail('usage', `run ${run.run_id} already has PR #${run.pr}; pass --replace-pr to record #${input.pr} instead`, {
      flag: '--replace-pr',
      run_id: run.run_id,
      pr: run.pr,
      pr_url: run.pr_url,
    })
  const alreadyClosed = run.phase === 'finished'
  if (alreadyClosed && (input.pr === null || input.pr === run.pr)) return unchanged(run)
  const next = structuredClone(run)
  if (input.pr !== null && input.pr !== run.pr) {
    next.pr = input.pr
    next.pr_url = null
  }
  if (!alreadyClosed) {
    next.phase = 'finished'
    next.outcome = { verdict: input.verdict, finished_at: input.now }
    next.review_claim = null
  }
  return changed(next, next)
}

/** The PR opened for the run (`finish --create-pr`); the claim on opening it goes. */
export function attachPr(run: RunState, input: { number: number; url: string; pid?: number }): Step<RunState> {
  const next = dropClaim(run, { key: PR_CREATE_KEY, pid: input.pid ?? context().pid }) ?? structuredClone(run)
  next.pr = input.number
  next.pr_url = input.url
  return changed(next, next)
}
