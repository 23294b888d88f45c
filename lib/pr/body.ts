// The PR body: task, who reviewed, a table of rounds, the cost, what is still open, and the whole transcript.
import { reviewerName, reviewerShown, runReviewerLabel } from '../run/reviewer-identity.ts'
import { findingPlace } from '../run/finding-place.ts'
import { renderHandoff } from '../run/handoff.ts'
import { neutraliseInline } from '../ground/neutralise.ts'
import { fenceFor } from '../ground/markdown.ts'
import { roundMeasured, type Unmeasured } from '../cost/measured.ts'
import { formatUsd } from '../ground/money.ts'
import { approvedTree, approvedTrees, openFindings } from '../run/run-queries.ts'
import type { Finding, RunState } from '../run/state.ts'
import { gateApproval, gateOf } from '../run/gated-review.ts'
import { EXCLUDED_BY_CONFIG, type NamedOnly } from '../snapshot/named-only.ts'
import { panelSentence } from '../run/panel-shown.ts'
import { recordOf, renderRecord } from './record.ts'

export const GITHUB_BODY_LIMIT = 65_536

export interface PrCost {
  total_usd: number
  by_round?: Record<number, number>
  /** The roles and rounds with no figure: said, never shown as a measured $0. */
  unmeasured?: Unmeasured
}

const usd = (value: number | null | undefined) => formatUsd(value)

/** A round's cost: `not measured` when neither role has a figure, `at least` when one lacks it. */
function roundCost(cost: PrCost | null, n: number): string {
  const figure = cost?.by_round?.[n]
  if (!cost?.unmeasured) return usd(figure)
  const coder = roundMeasured(cost.unmeasured, n, 'coder')
  const reviewer = roundMeasured(cost.unmeasured, n, 'reviewer')
  return !coder && !reviewer ? 'not measured' : coder && reviewer ? usd(figure) : `at least ${usd(figure)}`
}

/** The run's total, and which role had no figure at all. */
function totalCost(cost: PrCost | null): string {
  if (!cost) return 'not measured'
  const missing = (cost.unmeasured?.roles ?? []).filter((r) => r.how === 'none').map((r) => r.role)
  const gaps = (cost.unmeasured?.roles.length ?? 0) + (cost.unmeasured?.rounds.length ?? 0)
  if (gaps === 0) return usd(cost.total_usd)
  return `at least ${usd(cost.total_usd)} (${missing.length ? `${missing.join(' and ')} not measured` : 'some rounds not measured'})`
}

/** The approved tree and the base, so anyone can check `git rev-parse <head>^{tree}` (or run `pair-loop verify`). */
function approvalLine(run: RunState): string[] {
  const tree = approvedTree(run)
  const base = `base \`${run.base_sha}\`${run.base_branch ? ` (where the branch meets \`${neutraliseInline(run.base_branch)}\`)` : ''}`
  if (!tree) return [`Reviewed against ${base}; **no tree was approved**.`, '']
  return [
    `**Approved tree:** \`${tree}\` · ${base} · reviewer: ${lastReviewTool(run)}. Check it: \`git rev-parse <head>^{tree}\` must print that tree (or run \`pair-loop verify --pr N\`).`,
    '',
    ...earlierApprovals(run),
  ]
}

/** Trees approved before the newest (fixes after the PR are rounds): listed in order, none of them ships any more. */
function earlierApprovals(run: RunState): string[] {
  const all = approvedTrees(run)
  if (all.length < 2) return []
  const rows = all.map(
    (entry, i) =>
      `${i + 1}. \`${entry.tree}\` · round ${entry.round} · ${entry.reviewer} · ${entry.at}${i === all.length - 1 ? ' (newest: the head must be it)' : ''}`,
  )
  return ['**Every approved tree, in order:**', '', ...rows, '']
}

const lastReviewTool = (run: RunState) => {
  const last = run.rounds.at(-1)?.reviewer
  return last ? reviewerName(reviewerShown(last)) : run.reviewer
}

/**
 * The approved change's paths named only (a binary, a file over 16 MiB, not a regular file, excluded by the person's
 * config), each with its size and blob id: said in the PR body too, so no one reads the approval as covering them.
 */
function notReviewed(named: NamedOnly[]): string[] {
  if (!named.length) return []
  const shown = named.slice(0, 50)
  const excluded = named.filter((item) => item.why === EXCLUDED_BY_CONFIG).length
  return [
    `**NOT REVIEWED** (${named.length} path(s) the reviewer was shown by name only, never their content):`,
    '',
    ...(excluded
      ? [
          `${excluded} of them ${excluded === 1 ? 'is' : 'are'} ${EXCLUDED_BY_CONFIG} (\`pair_loop.review_exclude\`): ${excluded === 1 ? 'it ships' : 'they ship'} in this PR, unread by the reviewer.`,
          '',
        ]
      : []),
    ...shown.map(
      (item) =>
        `- \`${neutraliseInline(item.path)}\` — ${item.why}${item.size === null ? '' : `, ${item.size} bytes`}${item.oid ? ` (blob \`${item.oid}\`)` : ''}`,
    ),
    ...(named.length > shown.length ? [`- … and ${named.length - shown.length} more`] : []),
    '',
  ]
}

/** One finding as a line of the body: its id, category/severity, place and text, and the coder's answer when there is one. */
function findingBullet(run: RunState, f: Finding): string {
  const answer = run.replies[f.id] ? ` _(answered: ${run.replies[f.id]!.disposition})_` : ''
  return `- **${f.id}** [${f.category}${f.severity ? `/${f.severity}` : ''}] ${f.path ? `\`${findingPlace(f)}\` — ` : ''}${neutraliseInline(f.text)}${answer}`
}

/** The last reviewed round's panel, each member's verdict and cost: who approved, and who did not. */
function panelLines(run: RunState): string[] {
  const round = run.rounds.findLast((r) => r.reviewer)
  const said = panelSentence(round?.reviewer)
  return said ? [`**Round ${round!.n}:** ${said}.`, ''] : []
}

/** The severity gate's approval, in the headline's part of the body: the rule approved, not the reviewer; never silent. */
function gateLines(run: RunState): string[] {
  const gate = gateApproval(run)
  if (!gate) return []
  const shown = gate.findings.slice(0, 50)
  const more = gate.findings.length - shown.length
  return [
    `**Round ${gate.round} was ${gate.said}** (the reviewer asked for changes; every finding was below the gate):`,
    '',
    ...shown.map((f) => findingBullet(run, f)),
    ...(more > 0 ? [`- … and ${more} more (\`pair-loop findings\`)`] : []),
    '',
  ]
}

/** A round's verdict as the reviewer said it, and the gate's approval beside it. */
const verdictCell = (review: RunState['rounds'][number]['reviewer']) =>
  review ? `${review.verdict}${gateOf(review, null) ? ' (approved by the severity gate)' : ''}` : '(not reviewed)'

export function renderPrBody(
  run: RunState,
  cost: PrCost | null,
  limit = GITHUB_BODY_LIMIT,
  namedOnly: NamedOnly[] = [],
): string {
  const fallback = run.reviewer_fallback ? ` (fallback: the configured reviewer's CLI was missing)` : ''
  const head = [
    `## ${neutraliseInline(run.task)}`,
    '',
    `Pair-loop run \`${run.run_id}\` · coder: **${run.coder}** · reviewer: **${runReviewerLabel(run)}**${fallback} · outcome: **${run.outcome?.verdict ?? 'open'}**`,
    '',
    ...approvalLine(run),
    ...panelLines(run),
    ...gateLines(run),
    ...notReviewed(namedOnly),
    '| round | verdict | findings | replies | cost |',
    '|---|---|---|---|---|',
    ...run.rounds.map((round) => {
      const findings = round.reviewer?.findings ?? []
      const replies = findings.filter((f) => run.replies[f.id]).length
      return `| ${round.n} | ${verdictCell(round.reviewer)} | ${findings.length} | ${replies} | ${roundCost(cost, round.n)} |`
    }),
    '',
    `**Total cost:** ${totalCost(cost)}`,
    '',
    renderRecord(recordOf(run, cost?.total_usd ?? null)), // for machines: the Action's verify mode reads it
  ]
  const extras: string[] = []
  for (const override of run.budget_overrides) {
    extras.push(
      '',
      `> Budget: the person chose to go on at ${usd(override.spent_usd)} of ${usd(override.limit_usd)} (${override.command}, round ${override.round}).`,
    )
  }
  const overCap = run.rounds.filter((r) => r.coder.over_cap).map((r) => r.n)
  if (overCap.length)
    extras.push('', `> Rounds past the cap of ${run.max_rounds}, by the person's choice: ${overCap.join(', ')}.`)
  // the findings a gate's approval left open are listed with it, above
  const open = run.outcome?.verdict === 'APPROVED' || gateApproval(run) ? [] : openFindings(run)
  if (open.length) extras.push('', '### Findings still open', '', ...open.map((f) => findingBullet(run, f)))
  // heading, outcome, rounds and cost always stay; the notes and open findings give way before them (half the room)
  const essentials = head.join('\n')
  const summary = essentials + cutToFit(extras.join('\n'), Math.floor(limit / 2) - essentials.length)
  return fitToLimit(summary, renderHandoff(run), limit)
}

/** At most `room` characters of `text`, ending at a whole line, with a visible note when anything was left out. */
function cutToFit(text: string, room: number): string {
  if (text.length <= room) return text
  const kept = text.slice(0, Math.max(0, room - 200))
  const cut = kept.slice(0, kept.lastIndexOf('\n') + 1)
  return `${cut}\n_[… ${text.length - cut.length} more characters of notes and open findings: see \`pair-loop findings\`]_`
}

/** The summary always stays whole; the transcript is shortened in the middle, visibly, to fit GitHub's limit. */
export function fitToLimit(summary: string, transcript: string, limit: number): string {
  const fence = fenceFor(transcript, 4)
  const open = `\n\n<details><summary>Full handoff transcript</summary>\n\n${fence}markdown\n`
  const close = `\n${fence}\n\n</details>\n`
  const whole = summary + open + transcript + close
  if (whole.length <= limit) return whole
  const room = limit - summary.length - open.length - close.length - 200
  if (room <= 0) return summary.slice(0, limit)
  const head = transcript.slice(0, Math.floor(room / 2))
  const tail = transcript.slice(transcript.length - Math.floor(room / 2))
  const cut = transcript.length - head.length - tail.length
  return `${summary}${open}${head}\n\n[… ${cut} characters of the transcript cut here to fit GitHub's ${limit}-character limit; the full HANDOFF.md is on the author's machine …]\n\n${tail}${close}`
}
