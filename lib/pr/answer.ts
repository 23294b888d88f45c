// Posting one answer on the PR, once per reviewer comment (lib/run/claimed-call.ts): under the run's lock the answer is
// keyed and claimed, gh posts it outside the lock, and under the lock again it is recorded and the claim dropped. A
// second call, at the same time or later, sees the claim or the record and posts nothing (`duplicate_reply`).
import { callOnce } from '../run/claimed-call.ts'
import { context, nowIso } from '../ground/context.ts'
import { ghTarget } from '../ground/gh.ts'
import type { RunState } from '../run/state.ts'
import { fail } from '../ground/errors.ts'
import { postRest } from './github.ts'
import { answerClaimKey, claimAnswer, recordAnswer, recordUnconfirmed } from './moves.ts'
import { bodyHash } from './unconfirmed.ts'
import type { PrReplyRecord } from '../run/pr-schema.ts'
import type { AnswerTarget } from './targets.ts'

export async function postAnswer(run: RunState, target: AnswerTarget, body: string) {
  const { done: posted } = await callOnce(run.run_id, answerClaimKey(target.key), {
    claim: (state, attempt) => claimAnswer(state, { key: target.key, ...attempt }),
    call: async () => refOf(await postRest(ghTarget(run), target.endpoint, { body })),
    record: (state, ref) => {
      // GitHub took it but named no comment: kept by its hash, confirmed by the next tick, never posted again blind
      if (!ref)
        return recordUnconfirmed(state, {
          key: target.key,
          entry: {
            kind: target.kind,
            body_sha256: bodyHash(body),
            at: nowIso(),
            head: target.head,
            to_bot: target.to_bot,
            finding_keys: target.finding_keys,
          },
          pid: context().pid,
        })
      const { id, url } = ref
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
  if (!posted)
    fail(
      'gh_error',
      `GitHub's answer for the reply to ${target.key} carries no comment id: it may have been posted. Recorded as posted_unconfirmed; the next pr-check looks for it on the PR before anything posts it again`,
      { run_id: run.run_id, key: target.key, posted_unconfirmed: true, retryable: false, next: 'pr-check' },
    )
  return {
    run_id: run.run_id,
    key: target.key,
    kind: target.kind,
    comment_id: posted.id,
    url: posted.url,
    answered_findings: target.finding_keys,
  }
}

/** The comment GitHub made (its id and web URL); null when its answer names none. */
function refOf(created: Record<string, unknown>): { id: number; url: string } | null {
  return typeof created.id === 'number' && typeof created.html_url === 'string'
    ? { id: created.id, url: created.html_url }
    : null
}
