// A review bot's verdict on the PR, read with pair-loop's own grammar: the last standalone `VERDICT:` line of the bot's
// latest summary (a conversation comment or a review body), and the keys of the findings it lists. Pure.
import { findingKey, parseFindings, parseVerdict } from '../review/grammar.ts'
import { authorClass, type People } from './classify.ts'
import { hexDigest } from '../digest.ts'
import type { Snapshot } from './schema.ts'

export type VerdictState = 'absent' | 'in_progress' | 'complete' | 'provider_error' | 'unknown'

export interface BotVerdict {
  state: VerdictState
  verdict: 'approved' | 'changes' | 'none'
  author: string | null
  comment_id: number | null
  comment_url: string | null
  /** The summary read: its id and a hash of its body (a bot that edits its comment gives a new verdict). */
  identity: string | null
  findings_count: number
  finding_keys: string[]
}

const IN_PROGRESS = /\b(in progress|reviewing|review (has )?started|running|queued|pending)\b/i
const PROVIDER_ERROR = /\b(error|failed|failure|rate[- ]limit(ed)?|overloaded|unavailable|timed out|quota)\b/i

/** The bot's latest summary, by when it was written; none → `absent`. */
export function readBotVerdict(snapshot: Snapshot, people: People): BotVerdict {
  const isBot = (login: string, type?: string) => authorClass(login, type, people) === 'review_bot'
  const summaries = [
    ...snapshot.comments
      .filter((c) => isBot(c.author, c.author_type))
      .map((c) => ({ kind: 'comment', id: c.id, author: c.author, body: c.body, at: c.created_at, url: c.url })),
    ...snapshot.reviews
      .filter((r) => isBot(r.author, r.author_type) && r.body.trim() !== '')
      .map((r) => ({ kind: 'review', id: r.id, author: r.author, body: r.body, at: r.submitted_at, url: r.url })),
  ]
  // the latest by time; among equal times (or none), the later in the snapshot
  const latest = summaries.reduce<(typeof summaries)[number] | undefined>(
    (best, s) => (!best || (s.at ?? '') >= (best.at ?? '') ? s : best),
    undefined,
  )
  if (!latest)
    return {
      state: 'absent',
      verdict: 'none',
      author: null,
      comment_id: null,
      comment_url: null,
      identity: null,
      findings_count: 0,
      finding_keys: [],
    }
  const verdict = parseVerdict(latest.body)
  const findings = verdict ? parseFindings(latest.body) : []
  const state: VerdictState = verdict
    ? 'complete'
    : IN_PROGRESS.test(latest.body)
      ? 'in_progress'
      : PROVIDER_ERROR.test(latest.body)
        ? 'provider_error'
        : 'unknown'
  return {
    state,
    verdict: verdict === 'APPROVED' ? 'approved' : verdict === 'CHANGES_REQUESTED' ? 'changes' : 'none',
    author: latest.author,
    comment_id: latest.id,
    comment_url: latest.url ?? null,
    identity: `${latest.kind}:${latest.id}:${hexDigest(latest.body).slice(0, 12)}`,
    findings_count: findings.length,
    finding_keys: [...new Set(findings.map((finding) => findingKey(finding)))],
  }
}
