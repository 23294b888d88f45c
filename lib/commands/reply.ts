// reply: the coder answers one finding, once; the next review prompt shows the answer. With postPr it also goes on the
// run's PR as a comment, once (lib/run/claimed-call.ts).
import { readBody } from '../ground/body-input.ts'
import { callOnce } from '../run/claimed-call.ts'
import { claimReplyPost, replyPostKey } from '../run/claims.ts'
import type { Context } from '../ground/context.ts'
import { commentOnPr, ghTarget } from '../ground/gh.ts'
import { neutraliseInline } from '../ground/neutralise.ts'
import { changeRun, resolveRun } from '../run/run-access.ts'
import { allFindings, replyKey } from '../run/run-queries.ts'
import type { Finding, Reply } from '../run/state.ts'
import { checkReply, notePostedReply, recordReply } from '../run/transitions.ts'

export interface ReplyOptions {
  run?: string
  cwd?: string
  /** The finding's id, round.number (the script checks its form). */
  finding: string
  disposition: Reply['disposition']
  /** The answer's file, or `-` for stdin. */
  bodyFile: string
  /** Also post the answer on the run's PR. */
  postPr: boolean
}

export async function run(ctx: Context, options: ReplyOptions) {
  const { finding: findingId, postPr } = options
  const body = await readBody(options.bodyFile, 'body-file', { cwd: options.cwd ?? ctx.cwd, stdin: ctx.io.stdin })
  const run = resolveRun(options, { allowFinished: postPr })
  checkReply(run, findingId, postPr)

  const recorded = await changeRun(run.run_id, (state) =>
    recordReply(state, {
      finding: findingId,
      disposition: options.disposition,
      body,
      post_pr: postPr,
      now: new Date(ctx.now()).toISOString(),
    }),
  )
  const document = {
    run_id: run.run_id,
    key: replyKey(run, findingId),
    finding: findingId,
    disposition: recorded.disposition,
    posted: false,
    comment_url: null as string | null,
  }
  if (!postPr) return document

  const finding = allFindings(run).find((f) => f.id === findingId)!
  const { done: posted } = await callOnce(run.run_id, replyPostKey(findingId), {
    claim: (state, attempt) => claimReplyPost(state, { finding: findingId, ...attempt }),
    call: () => commentOnPr(ghTarget(run), run.pr!, commentBody(finding, recorded)),
    record: (state, { url }) => notePostedReply(state, { finding: findingId, url }),
  })
  return { ...document, posted: true, comment_url: posted.url }
}

function commentBody(finding: Finding, answer: Reply): string {
  const where = finding.path ? ` \`${finding.path}${finding.line_start ? `:${finding.line_start}` : ''}\`` : ''
  return [
    `**pair-loop** · reply to reviewer finding ${finding.id} (${finding.category}${finding.severity ? `/${finding.severity}` : ''})${where}: **${answer.disposition}**`,
    '',
    `> ${neutraliseInline(finding.text)}`,
    '',
    answer.body,
  ].join('\n')
}
