// A panel's round as every document shows it (the review document, status, HANDOFF.md, the PR body): each member's
// own verdict (or its failure) and cost, and the rule that made the round's verdict of theirs.
import { formatUsd } from '../ground/money.ts'
import type { PanelMember, ReviewerRound } from './state.ts'

/** Each member, for a JSON document: nothing for a round of one reviewer (a document as before panels). */
export const panelFields = (review: ReviewerRound | null | undefined) =>
  review?.panel
    ? {
        approval: review.approval ?? 'all',
        panel: review.panel.map((member) => ({
          tool: member.tool,
          verdict: member.verdict,
          cost_usd: member.cost?.usd ?? null,
          session_id: member.session_id,
          model: member.model,
          calls: member.calls,
          findings_count: member.findings_count,
          ...(member.failure ? { failure: member.failure } : {}),
        })),
      }
    : {}

/** `codex: APPROVED, $0.0123`; a failed member: `gemini: failed (reviewer_failed), $0.0040`. */
export const memberLine = (member: PanelMember): string =>
  `${member.tool}: ${member.verdict ?? `failed (${member.failure?.code ?? 'unknown'})`}, ${formatUsd(member.cost?.usd ?? null)}`

/** One sentence for text: `Panel (approval: all): claude: APPROVED, $0.0010; codex: CHANGES_REQUESTED, $0.0020`. */
export const panelSentence = (review: ReviewerRound | null | undefined): string | null =>
  review?.panel ? `Panel (approval: ${review.approval ?? 'all'}): ${review.panel.map(memberLine).join('; ')}` : null
