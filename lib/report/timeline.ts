// The rounds as a timeline: what the coder did, what the reviewer said, each finding with its reply and recurrence.
import type { RoundCost } from '../cost/ledger-types.ts'
import { roundMeasured, type Unmeasured } from '../cost/measured.ts'
import { formatUsd } from '../ground/money.ts'
import type { Finding, Reply, Round, RunState } from '../run/state.ts'
import { findingPlace } from '../run/finding-place.ts'
import { findingAnchor, formatDuration, formatWhen, verdictLabel } from './format.ts'
import { html, proseHtml, type SafeHtml } from './html.ts'

/** The ledger's rounds and what it could not measure: each round's cost in the timeline. */
export interface TimelineCost {
  rounds: RoundCost[]
  unmeasured: Unmeasured
}

export const verdictBadge = (verdict: string | null) =>
  html`<span class="badge verdict-${verdict ?? 'none'}" data-verdict="${verdict ?? ''}">${verdict ? verdictLabel(verdict) : 'Not reviewed yet'}</span>`

function replyBlock(reply: Reply | undefined): SafeHtml {
  if (!reply) return html`<p class="reply muted" data-reply="none">No reply.</p>`
  return html`<div class="reply" data-reply="${reply.disposition}"><span class="disposition">Reply: ${reply.disposition}</span><span class="muted">${formatWhen(reply.at)}</span><div class="prose reply-body">${proseHtml(reply.body)}</div></div>`
}

function findingItem(finding: Finding, reply: Reply | undefined): SafeHtml {
  const place = findingPlace(finding)
  const said = finding.severity_said ? ` (said: ${finding.severity_said})` : ''
  const kind = `${finding.category}${finding.severity ? `/${finding.severity}` : ''}${said}`
  const recurrence = finding.recurring
    ? html`<span class="badge recurring" data-recurring-of="${finding.recurring_of ?? ''}">recurs${finding.recurring_of ? html` <a href="#${findingAnchor(finding.recurring_of)}">${finding.recurring_of}</a>` : ''}</span>`
    : null
  return html`<li class="finding" id="${findingAnchor(finding.id)}" data-finding="${finding.id}">
<div class="finding-head"><span class="finding-id">${finding.id}</span><span class="muted">[${kind}]</span>${place ? html`<code>${place}</code>` : null}${recurrence}</div>
<div class="prose finding-text">${proseHtml(finding.text)}</div>
${replyBlock(reply)}
</li>`
}

const diffStat = (round: Round) =>
  round.coder.diff
    ? `${round.coder.diff.files} file${round.coder.diff.files === 1 ? '' : 's'} changed, +${round.coder.diff.insertions} −${round.coder.diff.deletions}`
    : null

/** What a round cost (each role, or "not measured"), how long it took, and what it changed: one line under its head. */
function roundMeta(round: Round, cost: TimelineCost | null): SafeHtml {
  const row = cost?.rounds.find((r) => r.n === round.n)
  const measured = (role: 'coder' | 'reviewer') => row !== undefined && roundMeasured(cost!.unmeasured, round.n, role)
  const part = (role: 'coder' | 'reviewer') =>
    measured(role) ? formatUsd(row![role].usd) : html`<span class="unmeasured" data-measured="no">not measured</span>`
  const both = measured('coder') && measured('reviewer')
  const total =
    !measured('coder') && !measured('reviewer')
      ? html`<strong class="unmeasured" data-round-cost="">not measured</strong>`
      : html`<strong data-round-cost="${String(row!.usd)}">${both ? '' : 'at least '}${formatUsd(row!.usd)}</strong>`
  const coding = Date.parse(round.coder.done_at) - Date.parse(round.coder.started_at)
  const took = Number.isFinite(coding) && coding >= 0 ? formatDuration(coding) : '—'
  const review = round.reviewer ? ` · review ${formatDuration(round.reviewer.duration_ms)}` : ''
  const diff = diffStat(round)
  return html`<p class="round-meta" data-round-meta="${round.n}">${total} <span class="muted">(coder ${part('coder')}, reviewer ${part('reviewer')})</span> · coding ${took}${review}${diff ? ` · ${diff}` : ''}</p>`
}

function coderSide(run: RunState, round: Round): SafeHtml {
  const { coder } = round
  const notes = [
    coder.over_cap ? 'past the round cap, by the person' : null,
    coder.over_budget ? 'over budget, by the person' : null,
  ]
    .filter(Boolean)
    .join('; ')
  return html`<section class="side side-coder" aria-label="Coder, round ${round.n}">
<h4>Coder (${run.coder}) · done ${formatWhen(coder.done_at)}${notes ? ` · ${notes}` : ''}</h4>
<div class="prose coder-summary">${coder.summary || '(no summary)'}</div>
</section>`
}

function reviewerSide(run: RunState, round: Round): SafeHtml {
  const review = round.reviewer
  if (!review) return html`<p class="muted">Waiting for the review.</p>`
  const who = [review.tool, review.model, review.fallback_used ? 'fallback' : null].filter(Boolean).join(', ')
  const findings = review.findings.length
    ? html`<ol class="findings">${review.findings.map((finding) => findingItem(finding, run.replies[finding.id]))}</ol>`
    : null
  return html`<section class="side side-reviewer" aria-label="Reviewer, round ${round.n}">
<h4>Reviewer (${who}) · ${formatWhen(review.at)} · ${formatDuration(review.duration_ms)} · ${review.findings.length} finding${review.findings.length === 1 ? '' : 's'}</h4>
${review.summary ? html`<div class="prose reviewer-summary">${review.summary}</div>` : null}
${findings}
</section>`
}

function failedAttempts(run: RunState, n: number): SafeHtml[] {
  return run.failed_reviews
    .filter((failed) => failed.round === n)
    .map(
      (failed) =>
        html`<section class="side side-failed" aria-label="Failed review attempt"><h4>Review attempt failed (${failed.tool}) · ${formatWhen(failed.at)} · ${failed.code}</h4><div class="prose">${failed.message}</div></section>`,
    )
}

export function timeline(run: RunState, cost: TimelineCost | null = null): SafeHtml {
  if (run.rounds.length === 0) return html`<p class="muted">No round yet: the coder is still on round 1.</p>`
  const items = run.rounds.map((round) => {
    const verdict = round.reviewer?.verdict ?? null
    return html`<li class="round round-${verdict ?? 'none'}" id="round-${round.n}" data-round="${round.n}">
<h3>Round ${round.n} ${verdictBadge(verdict)}</h3>
${roundMeta(round, cost)}
${coderSide(run, round)}
${failedAttempts(run, round.n)}
${reviewerSide(run, round)}
</li>`
  })
  return html`<ol class="timeline" aria-label="Rounds">${items}</ol>`
}
