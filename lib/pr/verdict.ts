// A review bot's verdict on the PR: its latest summary (a conversation comment or a review body) read by that bot's
// format (lib/pr/bot-formats.ts), with the keys of the findings it lists in pair-loop's grammar. Pure.
import { hexDigest } from '../ground/digest.ts'
import { findingKey, parseFindings } from '../run/grammar.ts'
import { type BotFormat, readSummary } from './bot-formats.ts'
import type { Posted } from './action-reviews.ts'
import { authorClass, type People } from './classify.ts'
import type { Snapshot } from '../run/pr-schema.ts'

export type VerdictState = 'absent' | 'in_progress' | 'complete' | 'provider_error' | 'unknown'

export interface VerdictFinding {
  n: number
  key: string
  path: string | null
  line: number | null
  line_end: number | null
  text: string
}

export interface BotVerdict {
  state: VerdictState
  verdict: 'approved' | 'changes' | 'none'
  format: BotFormat | null
  author: string | null
  /** Where the summary is: a conversation comment (`pr-reply --comment`) or a review body (`pr-reply --review`). */
  kind: 'comment' | 'review' | null
  comment_id: number | null
  comment_url: string | null
  /** The summary read: its id and a hash of its body (a bot that edits its comment gives a new verdict). */
  identity: string | null
  findings_count: number
  finding_keys: string[]
  /** The findings the summary lists in pair-loop's grammar: `pr-reply --finding N` names the ones a reply answers. */
  findings: VerdictFinding[]
  /** The bot's must-fix lines: surface them, fix them; they are not threads to resolve. */
  must_fix: string[]
  /** The verdict cannot be read (no bot summary, or one in no known format): success then needs `manual_verify`. */
  degraded: boolean
  degraded_reason: 'review_absent' | 'review_unknown_format' | null
}

/** The bot's latest summary in a known format, by when it was written; none → `absent`. */
export function readBotVerdict(snapshot: Snapshot, people: People): BotVerdict {
  const isBot = (item: { author: string; author_type?: string } & Posted) =>
    authorClass(item.author, item.author_type, people, item) === 'review_bot'
  const summaries = [
    ...snapshot.comments
      .filter((c) => isBot(c))
      .map((c) => ({ ...c, kind: 'comment' as const, at: c.last_edited_at ?? c.created_at, review_state: null })),
    ...snapshot.reviews
      .filter((r) => isBot(r) && (r.body.trim() !== '' || r.state === 'APPROVED'))
      .map((r) => ({ ...r, kind: 'review' as const, at: r.last_edited_at ?? r.submitted_at, review_state: r.state })),
  ]
  // the latest by time; among equal times (or none), the later in the snapshot
  const ordered = summaries
    .map((s, index) => ({ s, index }))
    .sort((a, b) => (a.s.at ?? '').localeCompare(b.s.at ?? '') || a.index - b.index)
    .map(({ s }) => s)
  for (const latest of ordered.reverse()) {
    const reading = readSummary({ author: latest.author, body: latest.body, review_state: latest.review_state })
    if (!reading) continue // a notice, not a verdict: the one before stands
    const findings = reading.format === 'verdict_line' ? parseFindings(latest.body) : []
    return {
      state: reading.state,
      verdict: reading.verdict,
      format: reading.format,
      author: latest.author,
      kind: latest.kind,
      comment_id: latest.id,
      comment_url: latest.url ?? null,
      // a summary edited in place (a re-run) is a new verdict run, even with the same words
      identity: `${latest.kind}:${latest.id}:${hexDigest(latest.body).slice(0, 12)}${latest.last_edited_at ? `@${latest.last_edited_at}` : ''}`,
      findings_count: reading.findings_count,
      finding_keys: [...new Set(findings.map((finding) => findingKey(finding)))],
      findings: findings.map((finding) => ({
        n: finding.n,
        key: findingKey(finding),
        path: finding.path,
        line: finding.line_start,
        line_end: finding.line_end,
        text: finding.text,
      })),
      must_fix: reading.must_fix,
      degraded: reading.state === 'unknown',
      degraded_reason: reading.state === 'unknown' ? 'review_unknown_format' : null,
    }
  }
  return {
    state: 'absent',
    verdict: 'none',
    format: null,
    author: null,
    kind: null,
    comment_id: null,
    comment_url: null,
    identity: null,
    findings_count: 0,
    finding_keys: [],
    findings: [],
    must_fix: [],
    degraded: true,
    degraded_reason: 'review_absent',
  }
}

/** The command that answers the summary itself (a bot asking for changes with no inline thread to reply in). */
export function answerCommand(verdict: BotVerdict): string | null {
  if (verdict.comment_id === null) return null
  return `pr-reply --${verdict.kind === 'review' ? 'review' : 'comment'} ${verdict.comment_id} --body-file -`
}
