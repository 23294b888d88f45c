// Posting one answer on the PR, once per reviewer comment: under the run's lock the answer is keyed and claimed, gh
// posts it outside the lock, and under the lock again it is recorded and the claim dropped. A second call, at the same
// time or later, sees the claim or the record and posts nothing (`duplicate_reply`).
import { isClaimLive, ownSideClaim, releaseSideClaim } from '../claims.ts'
import { changeRun, nowIso } from '../run-access.ts'
import type { RunState } from '../state.ts'
import { createdRef, postRest } from './github.ts'
import { answerClaimKey, claimAnswer, recordAnswer } from './moves.ts'
import type { PrReplyRecord } from './schema.ts'
import type { AnswerTarget } from './targets.ts'

export async function postAnswer(run: RunState, target: AnswerTarget, body: string) {
  const claimKey = answerClaimKey(target.key)
  await changeRun(run.run_id, (state) =>
    claimAnswer(state, { key: target.key, claim: ownSideClaim(), heldLive: isClaimLive(state.claims?.[claimKey]) }),
  )
  let posted: { id: number; url: string }
  try {
    posted = createdRef(await postRest(run.repo, target.endpoint, { body }), 'reply')
  } catch (error) {
    await changeRun(run.run_id, (state) => releaseSideClaim(state, { key: claimKey, pid: process.pid })).catch(() => {})
    throw error
  }
  const record: PrReplyRecord = {
    kind: target.kind,
    comment_id: posted.id,
    url: posted.url,
    at: nowIso(),
    head: target.head,
    to_bot: target.to_bot,
    finding_keys: target.finding_keys,
  }
  await changeRun(run.run_id, (state) => recordAnswer(state, { key: target.key, record, pid: process.pid }))
  return {
    run_id: run.run_id,
    key: target.key,
    kind: target.kind,
    comment_id: posted.id,
    url: posted.url,
    answered_findings: target.finding_keys,
  }
}
