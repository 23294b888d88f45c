// The PR phase's write side against the fake GitHub: pr-resolve confirmed from the mutation (or resolve_unconfirmed),
// pr-reply once per reviewer comment even from two processes at once, a failed post left retriable, and the final
// round (review --pr, then pr-reply --review-findings as one PR review with inline comments).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULTS, keysNeedingTrust } from '../lib/run/config.ts'
import { tempDir } from './_helpers.ts'
import { expectError, expectOk } from './_expect.ts'
import { BOT, comment, ME, operationOf, posts, prSandbox, thread, world } from './_pr.ts'

const botThread = () => thread('PRRT_bot', [comment(11, BOT, 'The loop bound is off by one.')])

describe('pr-resolve', () => {
  it('is resolve_unconfirmed (21) after 3 attempts GitHub does not confirm, records nothing; confirmed later, once', async () => {
    // answered in the thread (a thread nobody answered is refused before any call: pr-every-voice.test.ts)
    const answered = thread('PRRT_bot', [...botThread().comments, comment(12, ME, 'Fixed in the next push.', 2)])
    const sb = await prSandbox(world({ threads: [answered], resolve_mode: 'refuse' }))
    expectOk(await sb.cli(['pr-check']))
    const refused = await sb.cli(['pr-resolve', '--thread', 'PRRT_bot'])
    expect(expectError(refused, 'resolve_unconfirmed')).toMatchObject({
      thread: 'PRRT_bot',
      attempts: 3,
      retryable: true,
      last_response: { id: 'PRRT_bot', isResolved: false },
    })
    expect(refused.code).toBe(21)
    expect(sb.calls().filter((call) => operationOf(call) === 'ResolveThread')).toHaveLength(3)
    expect(sb.state(sb.runId).pr_watch!.resolved).toEqual({})
    expect(expectOk(await sb.cli(['pr-check'])).threads.unresolved).toBe(1)

    sb.change((w) => {
      w.resolve_mode = 'confirm'
    })
    expect(expectOk(await sb.cli(['pr-resolve', '--thread', 'PRRT_bot']))).toMatchObject({
      confirmed: true,
      attempts: 1,
    })
    const before = sb.calls().length
    expect(expectOk(await sb.cli(['pr-resolve', '--thread', 'PRRT_bot']))).toMatchObject({
      confirmed: true,
      attempts: 0,
      already_resolved: true,
    })
    expect(sb.calls()).toHaveLength(before) // a confirmed thread is not asked again
  })

  // Caught the mutant that loosens the confirmation to `isResolved !== false` (pr/resolve.ts).
  it.each([
    ['a null thread', 'null_thread'],
    ['a thread without isResolved', 'no_field'],
  ])('is resolve_unconfirmed when GitHub answers %s, and records nothing', async (_name, mode) => {
    const sb = await prSandbox(world({ threads: [botThread()], resolve_mode: mode as 'null_thread' | 'no_field' }))
    expectOk(await sb.cli(['pr-check']))
    // --without-reply: the subject is the confirmation, not whether the thread was answered
    expectError(await sb.cli(['pr-resolve', '--thread', 'PRRT_bot', '--without-reply']), 'resolve_unconfirmed')
    expect(sb.state(sb.runId).pr_watch!.resolved).toEqual({})
  })

  it('refuses a malformed thread id as usage, without a call', async () => {
    const sb = await prSandbox()
    expect(expectError(await sb.cli(['pr-resolve', '--thread', 'x; rm -rf /']), 'usage').flag).toBe('--thread')
    expect(sb.calls()).toEqual([])
  })
})

describe('pr-reply', () => {
  it('two processes answering the same thread at once post once; the other is duplicate_reply', async () => {
    const sb = await prSandbox(world({ threads: [botThread()] }))
    expectOk(await sb.cli(['pr-check']))
    const slow = { FAKE_GH_DELAY_MS: '700' }
    const results = await Promise.all(
      ['first', 'second'].map((body) =>
        sb.cliProcess(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: body, env: slow }),
      ),
    )
    expect(results.map((r) => r.code).sort()).toEqual([0, 4])
    expectError(results.find((r) => r.code === 4)!, 'duplicate_reply')
    expect(posts(sb.calls())).toHaveLength(1)
    expect(sb.read().threads[0]!.comments).toHaveLength(2)
    expect(sb.state(sb.runId).claims).toEqual({})
  })

  it('a post GitHub refused with a 502 is not retried (it may have landed); the claim goes, and the same command posts', async () => {
    const sb = await prSandbox(world({ threads: [botThread()], faults: [{ match: 'POST', status: 502, times: 1 }] }))
    expectOk(await sb.cli(['pr-check']))
    expectError(await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'Fixed.' }), 'gh_error')
    expect(posts(sb.calls())).toHaveLength(1)
    expect(sb.state(sb.runId).claims).toEqual({})
    expectOk(await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'Fixed.' }))
    expect(sb.read().threads[0]!.comments.map((c) => c.body)).toEqual(['The loop bound is off by one.', 'Fixed.'])
  })

  it('a post refused by the rate limit (429) is retried: it was not applied', async () => {
    const sb = await prSandbox(world({ threads: [botThread()], faults: [{ match: 'POST', status: 429, times: 1 }] }))
    expectOk(await sb.cli(['pr-check']))
    expectOk(await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'Fixed.' }))
    expect(posts(sb.calls())).toHaveLength(2)
    expect(sb.read().threads[0]!.comments).toHaveLength(2)
  })

  it.each([
    [[], '--thread'],
    [['--thread', 'PRRT_bot', '--comment', '3'], '--thread'],
    [['--comment', 'abc'], '--comment'],
    [['--thread', 'PRRT_nope'], '--thread'],
    [['--review-findings', '--body-file', '-'], '--body-file'],
  ])('refuses %j as usage, posting nothing', async (flags, flag) => {
    const sb = await prSandbox(world({ threads: [botThread()] }))
    expectOk(await sb.cli(['pr-check']))
    const args = flags.includes('--body-file') || flags.length === 0 ? flags : [...flags, '--body-file', '-']
    expect(expectError(await sb.cli(['pr-reply', ...args], { input: 'x' }), 'usage').flag).toBe(flag)
    expect(posts(sb.calls())).toEqual([])
  })

  it('needs a pr-check snapshot first', async () => {
    const sb = await prSandbox(world({ threads: [botThread()] }))
    const error = expectError(
      await sb.cli(['pr-reply', '--thread', 'PRRT_bot', '--body-file', '-'], { input: 'x' }),
      'usage',
    )
    expect(error.next).toBe('pr-check')
  })
})

describe('the final round: review --pr, then pr-reply --review-findings', () => {
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

  /** A reviewer that keeps its prompt and names one finding on a diff line, one off the diff, one with no place. */
  function reviewer(dir: string): string {
    const script = join(dir, 'review.sh')
    writeFileSync(
      script,
      `cat > "${join(dir, 'prompt.txt')}"\nprintf '%s\\n' 'Looks mostly fine.' '1. [bug/major] src/a.ts:2 — b should be a + 2' '2. [docs] README.md:40 — mention b' '3. [style] — name things better' 'VERDICT: CHANGES_REQUESTED'\n`,
    )
    return JSON.stringify(['sh', script])
  }

  it('reviews the pushed diff, posts the findings as one review: inline where the diff has the line, the rest in its body', async () => {
    const sb = await prSandbox(world({ diff: DIFF }), { pair_loop: { pr_final_round: true } }, 7, {
      verdict: 'CHANGES_REQUESTED',
    })
    const dir = tempDir('pl-final-')
    const reviewed = expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer(dir)]))
    expect(reviewed).toMatchObject({ round: 'pr', pr: 7, verdict: 'CHANGES_REQUESTED', next: 'pr-reply' })
    expect(reviewed.findings.map((f: { id: string }) => f.id)).toEqual(['1.1', '1.2', '1.3'])
    const prompt = readFileSync(join(dir, 'prompt.txt'), 'utf8')
    expect(prompt).toContain('The change (the pushed PR #7 against its base)')
    expect(prompt).toContain('+export const b = a + 1')
    expect(sb.state(sb.runId).final_review!.review.verdict).toBe('CHANGES_REQUESTED')

    const posted = expectOk(await sb.cli(['pr-reply', '--review-findings']))
    expect(posted).toMatchObject({ inline: 1, in_body: 2, next: 'reply' }) // its findings opened a coder round
    const [payload] = sb.read().posted_reviews as Array<{ event: string; body: string; comments: unknown[] }>
    expect(payload!.event).toBe('COMMENT')
    expect(payload!.comments).toEqual([
      { path: 'src/a.ts', line: 2, side: 'RIGHT', body: expect.stringContaining('b should be a + 2') },
    ])
    expect(payload!.body).toContain('mention b')
    expect(payload!.body).toContain('name things better')
    expect(payload!.body).not.toMatch(/^VERDICT:/m)
    expectError(await sb.cli(['pr-reply', '--review-findings']), 'duplicate_reply')
    expect(posts(sb.calls())).toHaveLength(1)
    expect(expectError(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer(dir)]), 'wrong_phase').next).toBe(
      'reply',
    )
  })

  it('is off unless pair_loop.pr_final_round is set, and needs the round before posting it', async () => {
    const sb = await prSandbox(world({ diff: DIFF }), undefined, 7, { verdict: 'CHANGES_REQUESTED' })
    const off = expectError(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer(tempDir('pl-final-'))]), 'usage')
    expect(off).toMatchObject({ key: 'pair_loop.pr_final_round' })
    expect(expectError(await sb.cli(['pr-reply', '--review-findings']), 'usage').next).toBe('review')
    expect(sb.calls()).toEqual([])
  })
})

describe('the PR phase config', () => {
  it('a tracked repository config sets pr_final_round without trust, but pr_bots (whose reviews block) only with it', () => {
    const tracked = { tracked: true }
    expect(keysNeedingTrust({ pair_loop: { pr_final_round: true } }, undefined, tracked)).toEqual([])
    expect(keysNeedingTrust({ pair_loop: { pr_bots: ['my-bot[bot]'] } }, undefined, tracked)).toEqual([
      'pair_loop.pr_bots',
    ])
    expect(DEFAULTS.pair_loop).toMatchObject({ pr_final_round: false })
    expect(DEFAULTS.pair_loop.pr_bots).not.toContain('github-actions[bot]')
  })
})
