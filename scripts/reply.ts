#!/usr/bin/env node
// reply: the coder answers one finding, once; the next review prompt shows the answer. --post-pr also puts it on the PR, once.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { readBody } from '../lib/body-input.ts'
import { fail } from '../lib/errors.ts'
import { commentOnPr } from '../lib/gh.ts'
import { neutraliseInline } from '../lib/neutralise.ts'
import { claimReplyPost, isClaimLive, ownSideClaim, releaseSideClaim, replyPostKey } from '../lib/claims.ts'
import { changeRun, nowIso, resolveRun } from '../lib/run-access.ts'
import { allFindings, replyKey } from '../lib/run-queries.ts'
import { DISPOSITIONS, type Finding, type Reply } from '../lib/state.ts'
import { checkReply, notePostedReply, recordReply } from '../lib/transitions.ts'

const reply = defineScript({
  name: 'reply',
  description: "Record the coder's answer to one reviewer finding (fixed, wont-fix, question, ack).",
  args: {
    ...runArgs,
    finding: {
      type: 'string',
      required: true,
      description: 'the finding id, round.number (e.g. 1.2)',
      valueHint: 'R.N',
    },
    disposition: { type: 'enum', options: [...DISPOSITIONS], required: true, description: 'how the coder answers it' },
    'body-file': {
      type: 'string',
      required: true,
      description: 'the answer, from a file or - for stdin',
      valueHint: 'file',
    },
    'post-pr': { type: 'boolean', description: "also post the answer as a comment on the run's PR (through gh), once" },
  },
  async run(args, io) {
    if (!/^\d+\.\d+$/.test(args.finding))
      fail('usage', `--finding must look like 1.2 (round.number), got ${JSON.stringify(args.finding)}`, {
        flag: '--finding',
      })
    const postPr = args['post-pr'] ?? false
    const body = await readBody(args['body-file'], 'body-file', { cwd: args.cwd, stdin: io.stdin })
    const run = resolveRun(args, { allowFinished: postPr })
    checkReply(run, args.finding, postPr)

    const recorded = await changeRun(run.run_id, (state) =>
      recordReply(state, {
        finding: args.finding,
        disposition: args.disposition,
        body,
        post_pr: postPr,
        now: nowIso(),
      }),
    )
    const document = {
      run_id: run.run_id,
      key: replyKey(run, args.finding),
      finding: args.finding,
      disposition: recorded.disposition,
      posted: false,
      comment_url: null as string | null,
    }
    if (!postPr) return document

    // keyed and claimed under the lock, posted outside it, recorded under it: two calls never post twice
    const key = replyPostKey(args.finding)
    await changeRun(run.run_id, (state) =>
      claimReplyPost(state, {
        finding: args.finding,
        claim: ownSideClaim(),
        heldLive: isClaimLive(state.claims?.[key]),
      }),
    )
    const finding = allFindings(run).find((f) => f.id === args.finding)!
    let posted: { url: string }
    try {
      posted = await commentOnPr(run.repo, run.pr!, commentBody(finding, recorded))
    } catch (error) {
      await changeRun(run.run_id, (state) => releaseSideClaim(state, { key, pid: process.pid })).catch(() => {})
      throw error
    }
    await changeRun(run.run_id, (state) => notePostedReply(state, { finding: args.finding, url: posted.url }))
    return { ...document, posted: true, comment_url: posted.url }
  },
})

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

export default reply
if (isMain(import.meta)) void main(reply)
