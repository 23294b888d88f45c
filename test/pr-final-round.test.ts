// The final round, whole (issue 20, item 13), through the fake GitHub: a final round (`review --pr`) that asks for
// changes opens a coder round like any review's (its findings, inline or only in the review's body, answered with
// `reply`, the fix handed over); its own inline comments on the PR are pair-loop's, never threads to answer.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { computeLedger } from '../lib/cost/ledger.ts'
import { tempDir } from './_helpers.ts'
import { expectOk } from './_expect.ts'
import { comment, ME, prSandbox, world } from './_pr.ts'

const DIFF = [
  'diff --git a/src/a.ts b/src/a.ts',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,2 +1,3 @@',
  ' export const a = 1',
  '+export const b = a + 1',
  ' export const c = 3',
  '',
].join('\n')
const CONFIG = { pair_loop: { pr_final_round: true } }

/** A reviewer naming one finding on a diff line and two that only the review's body can carry. */
function reviewer(verdict: 'CHANGES_REQUESTED' | 'APPROVED' = 'CHANGES_REQUESTED'): string {
  const script = join(tempDir('pl-final-'), 'review.sh')
  writeFileSync(
    script,
    `cat >/dev/null\nprintf '%s\\n' 'Mostly fine.' '1. [bug/major] src/a.ts:2 — b should be a + 2' '2. [docs] README.md:40 — mention b' '3. [style] — name things better' 'VERDICT: ${verdict}'\n`,
  )
  return JSON.stringify(['sh', script])
}

async function finalRoundAskingForChanges() {
  const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7, { verdict: 'CHANGES_REQUESTED' })
  const reviewed = expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer()]))
  return { sb, reviewed }
}

describe('a final round that asks for changes opens a coder round', () => {
  it('goes on the run as its next round, the run back in coding, and its findings are answered with reply', async () => {
    const { sb, reviewed } = await finalRoundAskingForChanges()
    expect(reviewed).toMatchObject({ round: 'pr', verdict: 'CHANGES_REQUESTED', phase: 'coding', next: 'pr-reply' })
    const state = sb.state(sb.runId)
    expect(state).toMatchObject({ phase: 'coding', outcome: null })
    expect(state.rounds.at(-1)!.reviewer!.findings.map((f) => f.id)).toEqual(['1.1', '1.2', '1.3'])

    const status = expectOk(await sb.cli(['status']))
    expect(status.next).toBe('reply')
    for (const id of ['1.1', '1.2', '1.3'])
      expectOk(
        await sb.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], { input: 'Done.' }),
      )
    expect(expectOk(await sb.cli(['status'])).next).toBe('coder-done')
  })

  it('tracks the findings only the review body carries as open findings of the run, as the inline one', async () => {
    const { sb } = await finalRoundAskingForChanges()
    const posted = expectOk(await sb.cli(['pr-reply', '--review-findings']))
    expect(posted).toMatchObject({ inline: 1, in_body: 2, next: 'reply' })
    const open = expectOk(await sb.cli(['status'])).open_findings.map((f: { id: string }) => f.id)
    expect(open).toEqual(['1.1', '1.2', '1.3'])
  })

  it('counts its reviewer call once, in its round', async () => {
    const { sb } = await finalRoundAskingForChanges()
    const state = sb.state(sb.runId)
    expect(state.final_review!.review.at).toBe(state.rounds.at(-1)!.reviewer!.at) // the one review, in both places
    const ledger = computeLedger(state, { env: sb.env, pricing: {}, cache: false })
    expect(ledger.by_role.reviewer.calls).toBe(1)
  })

  it('an approving final round leaves the run finished and the PR watched', async () => {
    const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7, { verdict: 'CHANGES_REQUESTED' })
    const reviewed = expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer('APPROVED')]))
    expect(reviewed).toMatchObject({ phase: 'finished', next: 'pr-reply' })
    expect(sb.state(sb.runId)).toMatchObject({ phase: 'finished', rounds: [] })
    expect(expectOk(await sb.cli(['status'])).next).toBe('pr-check')
  })
})

describe("the final round's own inline comments", () => {
  it('are never listed as threads to answer or resolve, and do not hold the PR back', async () => {
    const { sb } = await finalRoundAskingForChanges()
    expectOk(await sb.cli(['pr-reply', '--review-findings']))
    const ours = sb.read().threads[0]!
    const tick = expectOk(await sb.cli(['pr-check']))
    expect(tick.threads).toMatchObject({ unresolved: 0, actionable: [], stale_unresolved: [] })
    expect(tick.threads.own_final_round).toEqual([ours.id])
  })

  it('become a thread to answer once a person replies in one', async () => {
    const { sb } = await finalRoundAskingForChanges()
    expectOk(await sb.cli(['pr-reply', '--review-findings']))
    sb.change((w) => {
      w.threads[0]!.comments.push({ ...comment(9001, 'alice', 'Is a + 2 right? I think a + 1 was meant.', 90) })
    })
    const tick = expectOk(await sb.cli(['pr-check']))
    expect(tick.threads.actionable.map((t: { in_reply_to: number }) => t.in_reply_to)).toEqual([9001])
    expect(tick.threads.own_final_round).toEqual([])
    expect(sb.read().threads[0]!.comments[0]!.author).toBe(ME)
  })
})
