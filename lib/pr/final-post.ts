// The final round's findings posted as one PR review (`pr-reply --review-findings`): inline comments where a finding's
// path and line are in the reviewed diff, the rest in the review's body. Keyed, claimed and recorded like any answer
// (lib/run/claimed-call.ts).
import { readFileSync } from 'node:fs'
import { callOnce } from '../run/claimed-call.ts'
import { context, nowIso } from '../ground/context.ts'
import { ghTarget } from '../ground/gh.ts'
import { fail } from '../ground/errors.ts'
import { neutraliseInline } from '../ground/neutralise.ts'
import { nextFields } from '../run/run-queries.ts'
import type { Finding, RunState } from '../run/state.ts'
import { commentableLines } from './diff-lines.ts'
import { createdRef, postRest } from './github.ts'
import { answerClaimKey, claimAnswer, recordAnswer, watchOf } from './moves.ts'
import { gateOf } from '../run/gated-review.ts'

export async function postFinalReview(run: RunState, pr: number) {
  const final = run.final_review
  if (!final)
    fail('usage', `run ${run.run_id} has no final round to post; run \`pair-loop review --pr\` first`, {
      flag: '--review-findings',
      next: 'review',
    })
  const key = `review-findings:${final.review.at}`
  const lines = final.diff_path ? commentableLines(readIfThere(final.diff_path)) : new Map<string, Set<number>>()
  const inline = final.review.findings.filter(
    (f) => f.path !== null && f.line_start !== null && lines.get(f.path)?.has(f.line_start),
  )
  const inBody = final.review.findings.filter((f) => !inline.includes(f))
  const payload = {
    event: 'COMMENT',
    body: reviewBody(
      final.review.verdict,
      final.review.tool,
      final.review.summary,
      inBody,
      gateOf(final.review, null)?.said,
    ),
    comments: inline.map((f) => ({ path: f.path, line: f.line_start, side: 'RIGHT', body: findingText(f) })),
  }
  const head = watchOf(run)?.observed?.head ?? null
  const { done: posted, recorded: next } = await callOnce(run.run_id, answerClaimKey(key), {
    claim: (state, attempt) => claimAnswer(state, { key, ...attempt }),
    call: async () =>
      createdRef(await postRest(ghTarget(run), `repos/{owner}/{repo}/pulls/${pr}/reviews`, payload), 'review'),
    record: (state, { id, url }) => {
      const record = {
        kind: 'review-findings' as const,
        comment_id: id,
        url,
        at: nowIso(),
        head,
        to_bot: false,
        finding_keys: [],
      }
      const step = recordAnswer(state, { key, record, pid: context().pid })
      return { state: step.state!, result: nextFields(step.state!) }
    },
  })
  return {
    run_id: run.run_id,
    key,
    review_id: posted.id,
    url: posted.url,
    inline: inline.length,
    in_body: inBody.length,
    ...next, // a final round that asked for changes: `reply` to its findings, in the coder round it opened
  }
}

function findingText(f: Finding): string {
  return `**${f.category}${f.severity ? `/${f.severity}` : ''}** (pair-loop final round, finding ${f.id}): ${neutraliseInline(f.text)}`
}

function reviewBody(verdict: string, tool: string, summary: string, rest: Finding[], gate?: string): string {
  const said = verdict === 'APPROVED' ? 'approves' : 'asks for changes'
  const lines = [`**pair-loop final round** · the ${tool} reviewer ${said} after reading the pushed diff.`]
  if (gate) lines.push('', `The round was ${gate}.`)
  if (summary.trim()) lines.push('', summary.trim())
  if (rest.length) {
    lines.push('', 'Findings without a line in the diff:', '')
    for (const f of rest) {
      const where = f.path ? ` \`${f.path}${f.line_start ? `:${f.line_start}` : ''}\`` : ''
      lines.push(`- ${findingText(f)}${where}`)
    }
  }
  return lines.join('\n')
}

function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}
