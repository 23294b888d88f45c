// Posting one answer on the PR, once per reviewer comment (lib/run/claimed-call.ts): under the run's lock the answer is
// keyed and claimed, gh posts it outside the lock, and under the lock again it is recorded and the claim dropped. A
// second call, at the same time or later, sees the claim or the record and posts nothing (`duplicate_reply`).
import { callOnce } from '../run/claimed-call.ts'
import { context, nowIso } from '../ground/context.ts'
import { ghTarget } from '../ground/gh.ts'
import type { RunState } from '../run/state.ts'
import { createdRef, postRest } from './github.ts'
import { answerClaimKey, claimAnswer, recordAnswer } from './moves.ts'
import type { PrReplyRecord } from '../run/pr-schema.ts'
import type { AnswerTarget } from './targets.ts'

export async function postAnswer(run: RunState, target: AnswerTarget, body: string) {
  const { done: posted } = await callOnce(run.run_id, answerClaimKey(target.key), {
    claim: (state, attempt) => claimAnswer(state, { key: target.key, ...attempt }),
    call: async () => createdRef(await postRest(ghTarget(run), target.endpoint, { body }), 'reply'),
    record: (state, { id, url }) => {
      const record: PrReplyRecord = {
        kind: target.kind,
        comment_id: id,
        url,
        at: nowIso(),
        head: target.head,
        to_bot: target.to_bot,
        finding_keys: target.finding_keys,
      }
      return recordAnswer(state, { key: target.key, record, pid: context().pid })
    },
  })
  return {
    run_id: run.run_id,
    key: target.key,
    kind: target.kind,
    comment_id: posted.id,
    url: posted.url,
    answered_findings: target.finding_keys,
  }
}
