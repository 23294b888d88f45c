// Whole PR lives against a fake GitHub (fixtures/gh with a world file, paginating at 2): pr-check reads it through
// gh's GraphQL API, pr-reply and pr-resolve act on it, and the world changes between ticks the way GitHub would.
import { describe, expect, it } from 'vitest'
import { expectError, expectOk } from './_expect.ts'
import { at, BOT, comment, issueComment, ME, operationOf, prSandbox, thread, world } from './_pr.ts'

const check = (name: string, conclusion: string | null, status = conclusion ? 'COMPLETED' : 'IN_PROGRESS') => ({
  type: 'CheckRun',
  name,
  status,
  conclusion,
  url: `https://ci.example/${name}`,
})
const legacy = (name: string, state: string) => ({ type: 'StatusContext', name, state })
const codes = (doc: { reasons: Array<{ code: string }> }) => doc.reasons.map((r) => r.code)

describe('a PR life against the fake GitHub', () => {
  it('CI pending → failing → passing (CheckRun and legacy StatusContext, paginated), then success', async () => {
    const sb = await prSandbox(
      world({ checks: [check('build', null), check('lint', 'SUCCESS'), legacy('ci/legacy', 'PENDING')] }),
    )
    const pending = expectOk(await sb.cli(['pr-check']))
    expect(pending).toMatchObject({ decision: 'keep_going', ci: { status: 'pending' }, next: 'pr-check' })
    expect(pending.ci.checks).toEqual([
      { name: 'build', status: 'pending', url: 'https://ci.example/build' },
      { name: 'lint', status: 'pass', url: 'https://ci.example/lint' },
      { name: 'ci/legacy', status: 'pending', url: null },
    ])
    // three checks at a page size of 2: the rollup was read in two pages
    expect(sb.calls().filter((call) => operationOf(call) === 'PrMeta')).toHaveLength(2)

    sb.change((w) => {
      w.checks = [check('build', 'FAILURE'), check('lint', 'SUCCESS'), legacy('ci/legacy', 'ERROR')]
    })
    const failing = expectOk(await sb.cli(['pr-check']))
    expect(failing).toMatchObject({ decision: 'keep_going', changed: true, ci: { status: 'fail' } })
    expect(codes(failing)).toContain('ci_failed')

    sb.change((w) => {
      w.pr.head = 'b'.repeat(40) // the fix, pushed
      w.checks = [check('build', 'SUCCESS'), check('lint', 'SUCCESS'), legacy('ci/legacy', 'SUCCESS')]
    })
    const green = expectOk(await sb.cli(['pr-check']))
    expect(green).toMatchObject({
      decision: 'success',
      ci: { status: 'pass' },
      next: null,
      recurrence: { fix_attempts: 1 },
    })
    expect(sb.state(sb.runId).pr_watch).toMatchObject({ ticks: 3, decision: 'success', fix_attempts: 1 })
  })

  it('a bot thread answered, then resolved: actionable → stale → clear', async () => {
    const longThread = thread('PRRT_bot', [
      comment(11, BOT, 'The loop bound is off by one.'),
      comment(12, ME, 'It is inclusive on purpose.', 1),
      comment(13, BOT, 'Then the test name says otherwise.', 2),
      comment(14, ME, 'Renamed it.', 3),
      comment(15, BOT, 'Still off by one in the last case.', 4),
    ])
    const sb = await prSandbox(world({ threads: [longThread] }))
    const first = expectOk(await sb.cli(['pr-check']))
    expect(first.threads.actionable).toHaveLength(1)
    // five comments at a page size of 2: the thread's comments were read from its own node, page by page
    expect(first.threads.actionable[0]).toMatchObject({ id: 'PRRT_bot', in_reply_to: 15, root_comment_id: 11 })
    expect(first.threads.actionable[0].comments.map((c: { database_id: number }) => c.database_id)).toEqual([
      11, 12, 13, 14, 15,
    ])
    expect(sb.calls().filter((call) => operationOf(call) === 'ThreadComments').length).toBeGreaterThan(0)

    const posted = expectOk(
      await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'Fixed in b0b.' }),
    )
    expect(posted).toMatchObject({ key: 'thread:PRRT_bot@15', kind: 'thread' })
    const inWorld = sb.read().threads[0]!.comments.at(-1)!
    expect(inWorld).toMatchObject({ author: ME, body: 'Fixed in b0b.' })
    const callsBefore = sb.calls().length
    const again = expectError(
      await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'twice' }),
      'duplicate_reply',
    )
    expect(again.recorded).toMatchObject({ comment_id: posted.comment_id, to_bot: true })
    expect(sb.calls()).toHaveLength(callsBefore) // refused before any request

    const answered = expectOk(await sb.cli(['pr-check']))
    expect(answered.threads).toMatchObject({ unresolved: 1, actionable: [] })
    expect(answered.threads.stale_unresolved.map((t: { id: string }) => t.id)).toEqual(['PRRT_bot'])
    expect(codes(answered)).toContain('threads_stale_unresolved')

    expect(expectOk(await sb.cli(['pr-resolve', '--thread', 'PRRT_bot']))).toMatchObject({
      thread: 'PRRT_bot',
      confirmed: true,
      attempts: 1,
    })
    expect(sb.read().threads[0]!.is_resolved).toBe(true)
    const clear = expectOk(await sb.cli(['pr-check']))
    expect(clear).toMatchObject({ decision: 'success', threads: { unresolved: 0 } })
  })

  it("a person's comment answered in the conversation", async () => {
    const sb = await prSandbox(world({ comments: [issueComment(21, 'alice', 'Why a new dependency?', 1)] }))
    const first = expectOk(await sb.cli(['pr-check']))
    expect(first.conversation.actionable.map((c: { id: number }) => c.id)).toEqual([21])
    expect(first.decision).toBe('keep_going')
    const posted = expectOk(
      await sb.cli(['pr-reply', '--comment', '21', '--body-file', '-'], { input: 'It replaces 300 lines of ours.' }),
    )
    expect(posted).toMatchObject({ key: 'conversation:21', kind: 'conversation' })
    expect(sb.read().comments.at(-1)).toMatchObject({ author: ME, body: 'It replaces 300 lines of ours.' })
    expect(expectOk(await sb.cli(['pr-check']))).toMatchObject({
      decision: 'success',
      conversation: { actionable: [] },
    })
  })

  it('the head moving mid-collect: read again once; moving twice is head_moved (22), only the error kept', async () => {
    const sb = await prSandbox(world({ move_head_on_meta: ['b'.repeat(40)] }))
    const doc = expectOk(await sb.cli(['pr-check']))
    expect(doc.pr.head).toBe('b'.repeat(40))
    expect(sb.calls().filter((call) => operationOf(call) === 'PrHead')).toHaveLength(2)

    sb.change((w) => {
      w.move_head_on_meta = ['c'.repeat(40), 'd'.repeat(40)]
    })
    const before = sb.state(sb.runId)
    const result = await sb.cli(['pr-check'])
    const error = expectError(result, 'head_moved')
    expect(error).toMatchObject({ pr: 7, retryable: true })
    expect(result.code).toBe(22)
    // the failed tick keeps its error, and nothing else of what it read
    const after = sb.state(sb.runId)
    expect(after.pr_watch!.last_error).toMatchObject({ code: 'head_moved', message: error.message })
    expect({ ...after.pr_watch, last_error: null }).toEqual(before.pr_watch)
  })

  it('merged by someone else: escalate, merged_at recorded, and status --all counts the merged PR', async () => {
    const sb = await prSandbox()
    expectOk(await sb.cli(['pr-check']))
    sb.change((w) => {
      w.pr.state = 'MERGED'
      w.pr.merged_at = at(60)
    })
    const merged = expectOk(await sb.cli(['pr-check']))
    expect(merged).toMatchObject({ decision: 'escalate', merged: true, next: 'ask-user', pr: { merged_at: at(60) } })
    expect(codes(merged)[0]).toBe('pr_merged')
    expect(sb.state(sb.runId).pr_watch!.merged_at).toBe(at(60))
    const all = expectOk(await sb.cli(['status', '--all']))
    expect(all.runs[0]).toMatchObject({ run_id: sb.runId, merged_at: at(60) })
    expect(all.merged_prs).toMatchObject({ count: 1, total_usd: 0, usd_per_merged_pr: 0 })
    expect(all.merged_prs.runs).toEqual([{ run_id: sb.runId, pr: 7, merged_at: at(60), cost_usd: 0 }])
  })

  it('a conflict with the base: escalate', async () => {
    const sb = await prSandbox(world({ pr: { ...world().pr, mergeable: 'CONFLICTING' } }))
    const doc = expectOk(await sb.cli(['pr-check']))
    expect(doc).toMatchObject({ decision: 'escalate', next: 'ask-user' })
    expect(codes(doc)[0]).toBe('merge_conflict')
  })

  it("a bot finding recurring after it was answered: escalate with the finding's key", async () => {
    const summary = (id: number, minutes: number) =>
      issueComment(
        id,
        BOT,
        `Review\n\n1. [bug/major] src/a.ts:3 — off by one in the loop bound\n\nVERDICT: CHANGES_REQUESTED`,
        minutes,
      )
    const sb = await prSandbox(world({ comments: [summary(41, 1)] }))
    const first = expectOk(await sb.cli(['pr-check']))
    expect(first.verdict).toMatchObject({ state: 'complete', verdict: 'changes', findings_count: 1 })
    expectOk(await sb.cli(['pr-reply', '--comment', '41', '--body-file', '-'], { input: 'The bound is inclusive.' }))
    sb.change((w) => {
      w.comments.push(summary(42, 30))
    })
    const again = expectOk(await sb.cli(['pr-check']))
    expect(again).toMatchObject({ decision: 'escalate', recurrence: { recurring_keys: first.verdict.finding_keys } })
    expect(codes(again)[0]).toBe('recurrence_after_reply')
  })

  it('rate limiting, then success: 429 and a rate-limit 403 are retried; a 404 is not', async () => {
    const sb = await prSandbox(
      world({
        faults: [
          { match: 'query PrMeta', status: 429, times: 1 },
          { match: 'query PrThreads', status: 403, times: 1 },
          { match: 'query PrComments', status: 502, times: 1 },
        ],
      }),
    )
    const doc = expectOk(await sb.cli(['pr-check']))
    expect(doc.decision).toBe('success')
    const ops = sb.calls().map(operationOf)
    for (const op of ['PrMeta', 'PrThreads', 'PrComments']) expect(ops.filter((o) => o === op)).toHaveLength(2)

    sb.change((w) => {
      w.faults = [{ match: 'query PrMeta', status: 404, times: 1 }]
    })
    const before = sb.calls().length
    expectError(await sb.cli(['pr-check']), 'gh_error')
    expect(sb.calls()).toHaveLength(before + 1)
  })

  it('a call that outruns its time limit is retried (a read)', async () => {
    const sb = await prSandbox(world({ faults: [{ match: 'query PrHead', status: 'timeout', times: 1 }] }))
    const doc = expectOk(await sb.cli(['pr-check'], { env: { PAIR_LOOP_GH_TIMEOUT_S: '1' } }))
    expect(doc.decision).toBe('success')
    expect(sb.calls().filter((call) => operationOf(call) === 'PrHead')).toHaveLength(2)
  })
})
