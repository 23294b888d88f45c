// A panel's round in the one detached worker: every member reviews the same snapshot at once, each on its own copy;
// a member that fails is called again alone, once. What the round records: each member's own verdict, session, cost
// and failure (`panel`), the findings merged by key, and the verdict the approval rule makes of the members'.
import type { Config } from '../run/config.ts'
import { nowIso } from '../ground/context.ts'
import { afterFailure } from '../run/run-queries.ts'
import { sumCalls } from '../cost/review-calls.ts'
import type { PanelMember } from '../run/state.ts'
import type { RunState } from '../run/state.ts'
import type { ReviewInput } from '../run/transitions.ts'
import type { Vendor } from '../run/vendors.ts'
import type { AttemptJob } from './attempt-files.ts'
import { type CallRecord, type Conducted, type ConductOptions, conductReview } from './conduct.ts'
import type { CallControl } from './process.ts'
import { reviewedChange } from './diff.ts'
import { mergeFindings, panelVerdict, parseApproval } from './panel.ts'
import { chooseMember, type ReviewerChoice } from './reviewers.ts'
import { stoppedAs, type TaskResult, type WorkerCall } from './worker.ts'

interface MemberOutcome {
  choice: ReviewerChoice
  conducted: Conducted
  /** Every call it made, the retry's too: each was paid for. */
  calls: CallRecord[]
}

/** The panel a round has: `--reviewers` of this call, else the person's `pair_loop.reviewers` (null: one reviewer). */
export const panelOf = (job: Pick<AttemptJob, 'reviewers'>, config: Config): Vendor[] | null =>
  (job.reviewers as Vendor[] | null | undefined) ?? config.pair_loop.reviewers ?? null

export type PanelConducted =
  | { review: ReviewInput; tool: ReviewerChoice['tool']; calls: CallRecord[] }
  | ({
      failed: Array<{ tool: ReviewerChoice['tool']; code: string; message: string; calls: CallRecord[] }>
    } & TaskResult)

/**
 * Every member at once on the one change. Under `all` a member still failing after its retry fails the round (its
 * approval cannot be had); under `any` or `quorum:N` the others decide, the failure recorded as that member's.
 */
export async function conductPanel(
  run: RunState,
  tools: Vendor[],
  job: AttemptJob,
  call: WorkerCall,
  config: Config,
  /** What every call takes from the run's config and the command's flags (session.ts callSettings). */
  settings: (choice: ReviewerChoice) => Omit<ConductOptions, 'costOf'> & Pick<ConductOptions, 'costOf'>,
): Promise<PanelConducted> {
  const approval = config.pair_loop.approval
  // taken once: every member is shown the same snapshot
  const change = call.change ?? reviewedChange(run.repo, run.base_sha, config.pair_loop.max_diff_bytes)
  const relays = tools.map(
    (): CallControl => ({ kill: null, interrupted: false, onOutput: call.watch.control.onOutput }),
  )
  // the watch (cancel, a signal, the watchdog) ends every member's call
  call.watch.control.kill = () => {
    for (const relay of relays) {
      relay.interrupted = true
      relay.kill?.()
    }
  }
  const outcomes = await Promise.all(
    tools.map(async (tool, index): Promise<MemberOutcome> => {
      const choice = call.watch.watched(chooseMember(run, config, tool))
      const once = () =>
        conductReview(run, {
          ...settings(choice),
          budgetLeftUsd: null, // one member may not spend what the others need: the brake checked the panel whole
          signalRelay: relays[index],
          onSpawn: call.onSpawn,
          change,
        })
      call.watch.member(tool, 'running')
      const first = await once()
      if (first.ok || call.watch.stopped()) {
        call.watch.member(tool, first.ok ? 'answered' : 'failed')
        return { choice, conducted: first, calls: first.calls }
      }
      call.log(`the panel's ${tool} reviewer failed (${first.code}); calling it again, alone`)
      call.watch.member(tool, 'retrying')
      const second = await once()
      call.watch.member(tool, second.ok ? 'answered' : 'failed')
      return { choice, conducted: second, calls: [...first.calls, ...second.calls] }
    }),
  )
  call.watch.control.kill = null
  await call.noted()
  const stopped = stoppedAs(call.watch.stopped(), tools.join('+'))
  const failed = outcomes.filter((outcome) => !outcome.conducted.ok)
  if (stopped || failed.length === outcomes.length || (failed.length > 0 && approval === 'all'))
    return panelFailure(run, outcomes, stopped)
  return {
    review: panelReview(outcomes, approval, job.over_budget),
    tool: tools[0]!,
    calls: outcomes.flatMap((o) => o.calls),
  }
}

/** The round as recorded: the first member's identity, the sums, each member's own record, the rule's verdict. */
function panelReview(outcomes: MemberOutcome[], approval: string, overBudget: boolean): ReviewInput {
  const members = outcomes.map(memberOf)
  const reviews = outcomes.flatMap(({ choice, conducted }) =>
    conducted.ok ? [{ tool: choice.tool, ...conducted.review }] : [],
  )
  const first = outcomes[0]!
  const { usage, cost } = sumCalls(outcomes.flatMap((o) => o.calls))
  const seen = reviews[0]!
  return {
    tool: first.choice.tool,
    kind: first.choice.kind,
    program: first.choice.program,
    fallback_used: false,
    verdict: panelVerdict(members, parseApproval(approval)),
    findings: mergeFindings(reviews),
    summary: reviews.map((review) => `${review.tool}: ${review.summary}`).join('\n\n'),
    session_id: members[0]!.session_id,
    model: members[0]!.model,
    usage,
    cost,
    calls: members.reduce((sum, member) => sum + member.calls, 0),
    // they ran at once: the round took as long as its slowest member
    duration_ms: Math.max(...outcomes.map((o) => sumCalls(o.calls).duration_ms)),
    raw_output_path: first.calls.at(-1)?.raw_output_path ?? null,
    over_budget: overBudget,
    at: nowIso(),
    structured: reviews.every((review) => review.structured),
    session_ids: outcomes.flatMap((o) => o.calls.flatMap((c) => (c.session_id ? [c.session_id] : []))),
    touches_reviewer_instructions: seen.touches_reviewer_instructions,
    tree: seen.tree,
    shown_tree: seen.shown_tree,
    panel: members,
    approval,
  }
}

function memberOf({ choice, conducted, calls }: MemberOutcome): PanelMember {
  const { usage, cost } = sumCalls(calls)
  const review = conducted.ok ? conducted.review : null
  return {
    tool: choice.tool,
    verdict: review?.verdict ?? null,
    session_id: calls.at(-1)?.session_id ?? null,
    model: review?.reply.model ?? Object.keys(cost?.models ?? {})[0] ?? choice.model,
    usage,
    cost,
    calls: calls.length,
    findings_count: review?.findings.length ?? 0,
    ...(conducted.ok ? {} : { failure: { code: conducted.code, message: conducted.message } }),
  }
}

/** The round failed: each member's calls are kept as its own failed attempt (all were paid for); the error names why. */
function panelFailure(run: RunState, outcomes: MemberOutcome[], stopped: ReturnType<typeof stoppedAs>): PanelConducted {
  const culprit = outcomes.find((o) => !o.conducted.ok)
  const reason = culprit && !culprit.conducted.ok ? culprit.conducted : null
  const code = stopped?.code ?? reason?.code ?? 'reviewer_failed'
  const message = stopped?.message ?? `the panel's ${culprit?.choice.tool} reviewer failed twice: ${reason?.message}`
  const failed = outcomes.map((o) => ({
    tool: o.choice.tool,
    code: stopped?.kept ?? (o.conducted.ok ? 'panel_failed' : o.conducted.code),
    message: o.conducted.ok ? message : o.conducted.message,
    calls: o.calls,
  }))
  const details = {
    run_id: run.run_id,
    round: run.rounds.length,
    tool: culprit?.choice.tool ?? outcomes[0]!.choice.tool,
    phase: run.phase,
    ...afterFailure(run, stopped?.kept ?? code),
    panel: failed.map((f) => ({ tool: f.tool, code: f.code })),
    ...(stopped || !reason ? {} : reason.details),
  }
  return { failed, error: { code, message, details } }
}
