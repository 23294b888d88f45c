#!/usr/bin/env node
// reply: the coder answers one finding, once; the next review prompt shows the answer. --post-pr also puts it on the PR, once.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { readBody } from '../lib/body.ts'
import { fail } from '../lib/errors.ts'
import { commentOnPr } from '../lib/gh.ts'
import { neutraliseInline } from '../lib/handoff.ts'
import { allFindings, changeRun, expectPhase, nowIso, resolveRun } from '../lib/loop.ts'
import { DISPOSITIONS, type Finding, type Reply, type RunState } from '../lib/state.ts'

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
  async run(args) {
    if (!/^\d+\.\d+$/.test(args.finding))
      fail('usage', `--finding must look like 1.2 (round.number), got ${JSON.stringify(args.finding)}`, {
        flag: '--finding',
      })
    const postPr = args['post-pr'] ?? false
    const body = await readBody(args['body-file'], 'body-file', args.cwd)
    const run = resolveRun(args, { allowFinished: postPr })
    check(run, args.finding, postPr)

    const recorded = await changeRun(run.run_id, (state) => {
      const { finding, existing } = check(state, args.finding, postPr)
      if (existing) return { result: existing } // recorded earlier, not yet posted: post that answer now
      const fresh: Reply = {
        finding: finding.id,
        key: finding.key,
        disposition: args.disposition,
        body,
        at: nowIso(),
        comment_url: null,
      }
      state.replies[finding.id] = fresh
      return { state, result: fresh }
    })
    const document = {
      run_id: run.run_id,
      key: replyKey(run, args.finding),
      finding: args.finding,
      disposition: recorded.disposition,
      posted: false,
      comment_url: null as string | null,
    }
    if (!postPr) return document

    const finding = allFindings(run).find((f) => f.id === args.finding)!
    const commentUrl = await commentOnPr(run.repo, run.pr!, commentBody(finding, recorded))
    await changeRun(run.run_id, (state) => {
      state.replies[args.finding] = { ...state.replies[args.finding]!, comment_url: commentUrl }
      return { state, result: undefined }
    })
    return { ...document, posted: true, comment_url: commentUrl }
  },
})

export const replyKey = (run: Pick<RunState, 'run_id'>, findingId: string) => `${run.run_id}:reply:${findingId}`

/**
 * The finding must exist and have no reply yet. With --post-pr a reply recorded but not yet posted
 * (a gh failure, or the run finished since) is posted instead: that is how a failed post is retried.
 * The PR usually exists only once the run is finished, so --post-pr also answers on a finished run.
 */
function check(run: RunState, findingId: string, postPr: boolean): { finding: Finding; existing: Reply | null } {
  expectPhase(
    run,
    postPr ? ['coding', 'reviewing', 'approved', 'capped', 'finished'] : ['coding', 'reviewing', 'approved', 'capped'],
    'reply',
  )
  if (postPr && run.pr === null) {
    fail(
      'usage',
      `run ${run.run_id} has no PR recorded; open one with \`finish --create-pr\` or record it with \`finish --pr N\` first`,
      { flag: '--post-pr', run_id: run.run_id },
    )
  }
  const finding = allFindings(run).find((f) => f.id === findingId)
  if (!finding) {
    fail('finding_not_found', `run ${run.run_id} has no finding ${findingId}`, {
      run_id: run.run_id,
      finding: findingId,
      known: allFindings(run).map((f) => f.id),
    })
  }
  const existing = run.replies[findingId] ?? null
  if (existing && !(postPr && existing.comment_url === null)) {
    fail('duplicate_reply', `finding ${findingId} already has a reply (${existing.disposition}, ${existing.at})`, {
      run_id: run.run_id,
      key: replyKey(run, findingId),
      recorded: existing,
    })
  }
  return { finding, existing }
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

export default reply
if (isMain(import.meta)) await main(reply)
