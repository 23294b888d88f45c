#!/usr/bin/env node
// reply: the coder answers one finding, once; the next review prompt shows the answer.
import { defineScript, isMain, main, runArgs } from '../lib/cli.ts'
import { readBody } from '../lib/body.ts'
import { fail } from '../lib/errors.ts'
import { allFindings, changeRun, expectPhase, nowIso, resolveRun } from '../lib/loop.ts'
import { DISPOSITIONS, type Reply, type RunState } from '../lib/state.ts'

const reply = defineScript({
  name: 'reply',
  description: "Record the coder's answer to one reviewer finding (fixed, wont-fix, question, ack).",
  args: {
    ...runArgs,
    finding: { type: 'string', required: true, description: 'the finding id, round.number (e.g. 1.2)', valueHint: 'R.N' },
    disposition: { type: 'enum', options: [...DISPOSITIONS], required: true, description: 'how the coder answers it' },
    'body-file': { type: 'string', required: true, description: 'the answer, from a file or - for stdin', valueHint: 'file' },
  },
  async run(args) {
    if (!/^\d+\.\d+$/.test(args.finding)) fail('usage', `--finding must look like 1.2 (round.number), got ${JSON.stringify(args.finding)}`, { flag: '--finding' })
    const body = await readBody(args['body-file'], 'body-file', args.cwd)
    const run = resolveRun(args)
    check(run, args.finding)
    return changeRun(run.run_id, (state) => {
      const finding = check(state, args.finding)
      const recorded: Reply = { finding: finding.id, key: finding.key, disposition: args.disposition, body, at: nowIso(), comment_url: null }
      state.replies[finding.id] = recorded
      return { state, result: { run_id: state.run_id, key: replyKey(state, finding.id), finding: finding.id, disposition: args.disposition, posted: false } }
    })
  },
})

export const replyKey = (run: Pick<RunState, 'run_id'>, findingId: string) => `${run.run_id}:reply:${findingId}`

function check(run: RunState, findingId: string) {
  expectPhase(run, ['coding', 'reviewing', 'approved', 'capped'], 'reply')
  const finding = allFindings(run).find((f) => f.id === findingId)
  if (!finding) {
    fail('finding_not_found', `run ${run.run_id} has no finding ${findingId}`, { run_id: run.run_id, finding: findingId, known: allFindings(run).map((f) => f.id) })
  }
  const existing = run.replies[findingId]
  if (existing) {
    fail('duplicate_reply', `finding ${findingId} already has a reply (${existing.disposition}, ${existing.at})`, {
      run_id: run.run_id,
      key: replyKey(run, findingId),
      recorded: existing,
    })
  }
  return finding
}

export default reply
if (isMain(import.meta)) await main(reply)
