// What a conducted review puts on the run: the reviewer round's record, or the failed attempt's (it was paid for),
// and what each of its calls cost.
import type { Config } from '../run/config.ts'
import { context, nowIso } from '../ground/context.ts'
import { costOfReviewerCall } from '../cost/reviewer.ts'
import { sumCalls } from '../cost/review-calls.ts'
import type { ReviewInput } from '../run/transitions.ts'
import type { CallRecord, Conducted, CostOfCall } from './conduct.ts'
import type { ReviewerChoice } from './reviewers.ts'

/** The round's record from a review that came back: usage and cost over every call, the last call's session. */
export function reviewInputOf(
  choice: ReviewerChoice,
  conducted: Extract<Conducted, { ok: true }>,
  overBudget: boolean,
): ReviewInput {
  const { usage, cost, duration_ms } = sumCalls(conducted.calls)
  const { review, calls } = conducted
  const sessions = calls.flatMap((call) => (call.session_id ? [call.session_id] : []))
  return {
    tool: choice.tool,
    kind: choice.kind,
    program: choice.program,
    fallback_used: choice.fallback_used,
    verdict: review.verdict,
    findings: review.findings,
    summary: review.summary,
    session_id: calls.at(-1)!.session_id,
    model: review.reply.model ?? Object.keys(cost?.models ?? {})[0] ?? choice.model,
    usage,
    cost,
    calls: calls.length,
    duration_ms,
    raw_output_path: calls.at(-1)!.raw_output_path,
    over_budget: overBudget,
    at: nowIso(),
    structured: review.structured,
    ...(calls.length > 1 ? { session_ids: sessions } : {}),
    touches_reviewer_instructions: review.touches_reviewer_instructions,
    tree: review.tree,
    shown_tree: review.shown_tree,
    ...(calls.at(-1)!.session_usage !== undefined ? { session_usage: calls.at(-1)!.session_usage } : {}),
  }
}

/** A failed attempt: when, which tool, the error, and its cost where the output told it. */
export function failureOf(
  tool: ReviewerChoice['tool'],
  code: string,
  message: string,
  calls: Array<Omit<CallRecord, 'raw_output_path'> & { raw_output_path?: string }>,
) {
  const last = calls.at(-1)
  return {
    at: nowIso(),
    tool,
    code,
    message,
    cost: sumCalls(calls).cost,
    raw_output_path: last?.raw_output_path ?? null,
    session_id: last?.session_id ?? null,
  }
}

/** What one reviewer call cost, priced at the run's own prices (the model asked for when the output names none). */
export function costOfCall(choice: ReviewerChoice, config: Pick<Config, 'pricing'>): CostOfCall {
  return (reply, tool, startedMs) =>
    costOfReviewerCall(
      {
        tool,
        model: reply.model ?? choice.model,
        usage: reply.usage,
        reported_usd: reply.reported_usd,
        model_usage: reply.model_usage,
        session_id: reply.session_id,
        since_ms: startedMs ?? null,
      },
      // its transcript is where the reviewer's own (built) environment put it
      { pricing: config.pricing, env: { ...choice.env, PAIR_LOOP_HOME: context().home } },
    )
}
