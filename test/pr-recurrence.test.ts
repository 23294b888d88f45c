// Recurrence per finding (issue 20, item 8), through the fake GitHub: a finding counts as answered only when a reply
// answered it (in its thread, or naming it in the bot's summary with --finding), and a finding the bot lists unanswered
// on three new verdict runs in a row (a streak of two recurrences, as the pr-babysit contract says) escalates.
import { describe, expect, it } from 'vitest'
import { findingKey } from '../lib/run/grammar.ts'
import { expectError, expectOk } from './_expect.ts'
import { BOT, botSample, botSummary, comment, prSandbox, thread, world } from './_pr.ts'

const codes = (doc: { reasons: Array<{ code: string }> }) => doc.reasons.map((r) => r.code)
const OFF_BY_ONE = 'off by one in the loop bound'
const RENAME = 'rename i to index'
/** The key pair-loop's grammar gives a finding botSummary writes (`[bug/major] src/a.ts:N — text`). */
const keyOf = (text: string) => findingKey({ category: 'bug', path: 'src/a.ts', text })
const reply = (input: string) => ({ input })

describe('a finding counts as answered only when a reply answered it', () => {
  it('a reply naming one finding of the summary leaves the other unanswered: when it comes back, no escalation', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 1)] }))
    const first = expectOk(await sb.cli(['pr-check']))
    expect(first.verdict.findings.map((f: { n: number; key: string }) => [f.n, f.key])).toEqual([
      [1, keyOf(OFF_BY_ONE)],
      [2, keyOf(RENAME)],
    ])
    const posted = expectOk(
      await sb.cli(
        ['pr-reply', '--comment', '41', '--finding', '1', '--body-file', '-'],
        reply('Inclusive on purpose.'),
      ),
    )
    expect(posted.answered_findings).toEqual([keyOf(OFF_BY_ONE)])
    sb.change((w) => {
      w.comments.push(botSummary(42, 'CHANGES_REQUESTED', [RENAME], 30))
    })
    const again = expectOk(await sb.cli(['pr-check']))
    expect(again.decision).toBe('keep_going')
    expect(codes(again)).not.toContain('recurrence_after_reply')
    expect(again.recurrence).toMatchObject({ recurring_keys: [], repeated_keys: [keyOf(RENAME)], streak: 1 })
  })

  it('the finding the reply named comes back: recurrence_after_reply names it alone', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 1)] }))
    expectOk(await sb.cli(['pr-check']))
    expectOk(await sb.cli(['pr-reply', '--comment', '41', '--finding', '1', '--body-file', '-'], reply('Inclusive.')))
    sb.change((w) => {
      w.comments.push(botSummary(42, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 30))
    })
    const again = expectOk(await sb.cli(['pr-check']))
    expect(again).toMatchObject({ decision: 'escalate', recurrence: { recurring_keys: [keyOf(OFF_BY_ONE)] } })
    expect(codes(again)[0]).toBe('recurrence_after_reply')
  })

  it("a reply in a bot's thread answers the summary's finding at that line, not the others", async () => {
    const sb = await prSandbox(
      world({
        threads: [thread('PRRT_bot', [comment(11, BOT, 'The bound is off by one.')], { path: 'src/a.ts', line: 3 })],
        comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 1)],
      }),
    )
    expectOk(await sb.cli(['pr-check']))
    const posted = expectOk(
      await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], reply('The bound is inclusive.')),
    )
    expect(posted.answered_findings).toEqual([keyOf(OFF_BY_ONE)]) // the summary lists it at src/a.ts:3
    sb.change((w) => {
      w.comments.push(botSummary(42, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 30))
    })
    expect(expectOk(await sb.cli(['pr-check'])).recurrence.recurring_keys).toEqual([keyOf(OFF_BY_ONE)])
  })

  it('a reply to a summary of one finding answers that finding', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE], 1)] }))
    expectOk(await sb.cli(['pr-check']))
    const posted = expectOk(await sb.cli(['pr-reply', '--comment', '41', '--body-file', '-'], reply('Inclusive.')))
    expect(posted.answered_findings).toEqual([keyOf(OFF_BY_ONE)])
  })

  it('refuses --finding on a comment that is not the summary, or a number the summary does not list', async () => {
    const sb = await prSandbox(
      world({
        comments: [
          { ...botSummary(40, 'CHANGES_REQUESTED', [], 0), author: 'alice', author_type: 'User', body: 'why?' },
          botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE, RENAME], 1),
        ],
      }),
    )
    expectOk(await sb.cli(['pr-check']))
    const notSummary = ['pr-reply', '--comment', '40', '--finding', '1', '--body-file', '-']
    expect(expectError(await sb.cli(notSummary, reply('x')), 'usage').flag).toBe('--finding')
    const outOfRange = ['pr-reply', '--comment', '41', '--finding', '3', '--body-file', '-']
    expect(expectError(await sb.cli(outOfRange, reply('x')), 'usage')).toMatchObject({ findings: [1, 2] })
    expect(sb.read().comments).toHaveLength(2) // nothing posted
  })
})

describe('the streak rule', () => {
  it('a finding listed unanswered on three new verdict runs in a row escalates with recurrence_streak', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE], 1)] }))
    expect(expectOk(await sb.cli(['pr-check'])).recurrence).toMatchObject({ streak: 0, repeated_keys: [] })
    sb.change((w) => {
      w.pr.head = 'b'.repeat(40) // a fix pushed, and the bot runs again
      w.comments.push(botSummary(42, 'CHANGES_REQUESTED', [OFF_BY_ONE], 20))
    })
    const second = expectOk(await sb.cli(['pr-check']))
    expect(second).toMatchObject({ decision: 'keep_going', recurrence: { streak: 1 } })
    sb.change((w) => {
      w.pr.head = 'c'.repeat(40)
      w.comments.push(botSummary(43, 'CHANGES_REQUESTED', [OFF_BY_ONE], 40))
    })
    const third = expectOk(await sb.cli(['pr-check']))
    expect(third).toMatchObject({
      decision: 'escalate',
      next: 'ask-user',
      recurrence: { streak: 2, repeated_keys: [keyOf(OFF_BY_ONE)] },
    })
    expect(codes(third)[0]).toBe('recurrence_streak')
  })

  it('the same summary read again, or a run still in progress in between, does not move the streak', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE], 1)] }))
    expectOk(await sb.cli(['pr-check']))
    expect(expectOk(await sb.cli(['pr-check'])).recurrence.streak).toBe(0) // the same run, ticked twice
    sb.change((w) => {
      w.comments.push({ ...botSummary(42, 'CHANGES_REQUESTED', [], 10), body: botSample('coderabbit-in-progress') })
    })
    const running = expectOk(await sb.cli(['pr-check']))
    expect(running).toMatchObject({ verdict: { state: 'in_progress' }, recurrence: { streak: 0 } })
    sb.change((w) => {
      w.comments.push(botSummary(43, 'CHANGES_REQUESTED', [OFF_BY_ONE], 20))
    })
    expect(expectOk(await sb.cli(['pr-check'])).recurrence).toMatchObject({ streak: 1 })
  })

  it('a finding that was absent from the run in between starts again', async () => {
    const sb = await prSandbox(world({ comments: [botSummary(41, 'CHANGES_REQUESTED', [OFF_BY_ONE], 1)] }))
    expectOk(await sb.cli(['pr-check']))
    for (const [id, findings, minutes] of [
      [42, [OFF_BY_ONE], 10],
      [43, [RENAME], 20],
      [44, [OFF_BY_ONE], 30],
    ] as const) {
      sb.change((w) => {
        w.comments.push(botSummary(id, 'CHANGES_REQUESTED', [...findings], minutes))
      })
      expectOk(await sb.cli(['pr-check']))
    }
    expect(sb.state(sb.runId).pr_watch!.finding_streaks).toEqual({ [keyOf(OFF_BY_ONE)]: 0 })
  })
})
