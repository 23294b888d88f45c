// Why a run waits for the person (`ask.reason`), in words: the same sentence in status --text and in the report.
import type { AskReason } from './ask.ts'

const WHY: Record<AskReason, string> = {
  round_cap: 'the round cap was reached without an approval',
  budget_exceeded: 'the run has spent its budget',
  wont_fix_recurring: "a finding the coder answered won't-fix came back",
  reviewer_failed_twice: 'the reviewer failed twice in a row',
  reviewer_unavailable: 'no reviewer CLI is installed and no reviewer command is set',
  config_untrusted: "the repository's .pair-loop.json sets keys you have not trusted",
  pr_escalated: 'the PR needs a person (pr-check escalated it)',
  stalemate: 'the reviewer raised the same findings again on files nobody changed since',
}

/** The reason in words; an unknown reason (a newer pair-loop's) as it is. */
export const askWhy = (reason: string): string => (Object.hasOwn(WHY, reason) ? WHY[reason as AskReason] : reason)
