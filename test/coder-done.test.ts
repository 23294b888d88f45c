import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeProjectDir } from '../lib/agents/locate.ts'
import { renderHandoff } from '../lib/run/handoff.ts'
import { MAX_BODY_BYTES } from '../lib/ground/body-input.ts'
import { recordReview, sandbox, tempDir, writeFiles } from './_helpers.ts'
import { expectError, expectOk, reviewWith, runDisk, runInReview, startRun } from './_expect.ts'

describe('coder-done', () => {
  it('records the round, moves to reviewing and says review is next', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const doc = expectOk(await sb.cli(['coder-done', '--summary', '  added the flag  ', '--findings-addressed', '0']))
    expect(doc).toMatchObject({
      version: 1,
      run_id: runId,
      round: 1,
      session_id: null,
      diff: { files: 1, insertions: 1, deletions: 0 }, // startRun's change.txt
      next: 'review',
    })
    const state = sb.state(runId)
    expect(state).toMatchObject({ phase: 'reviewing', revision: 2 })
    expect(state.rounds[0]!.coder.started_at).toBe(state.created_at)
    expect(state.rounds).toEqual([
      {
        n: 1,
        reviewer: null,
        coder: expect.objectContaining({
          summary: 'added the flag',
          findings_addressed: 0,
          over_cap: false,
          session_id: null,
        }),
      },
    ])
    const handoff = readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')
    expect(handoff).toBe(renderHandoff(state))
    expect(handoff).toContain('## Round 1 — CODER (claude) · ')
  })

  it('measures the diff against the base, untracked files included and HANDOFF.md left out', async () => {
    const sb = sandbox({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'keep\n' })
    const runId = expectOk(await sb.cli(['start', '--task', 'demo task'])).run_id // no change.txt: only these
    writeFiles(sb.repo, { 'a.txt': 'one\nTWO\nthree\nfour\n', 'new/c.txt': 'c1\nc2\nc3' })
    const doc = expectOk(await sb.cli(['coder-done', '--summary', 's']))
    // a.txt: two lines in, one out; new/c.txt: three lines in (the last without a newline)
    expect(doc.diff).toEqual({ files: 2, insertions: 5, deletions: 1 })
    expect(sb.state(runId).rounds[0]!.coder.diff).toEqual(doc.diff)
  })

  it('refuses a change that is empty against the base with wrong_phase, coder-done next, and changes nothing', async () => {
    const sb = sandbox()
    const runId = expectOk(await sb.cli(['start', '--task', 'nothing yet'])).run_id
    const before = runDisk(sb)
    const error = expectError(await sb.cli(['coder-done', '--summary', 'did nothing']), 'wrong_phase')
    expect(error).toMatchObject({ run_id: runId, phase: 'coding', files: 0, next: 'coder-done' })
    expect(error.message).toContain('the working tree is the same as the base commit')
    expect(runDisk(sb)).toEqual(before)
    writeFiles(sb.repo, { 'made.txt': 'now there is a change\n' })
    expect(expectOk(await sb.cli(['coder-done', '--summary', 'did it'])).diff.files).toBe(1)
  })

  const summaries: Array<[string, string[], string | undefined]> = [
    ['--summary', ['--summary', 'inline summary'], undefined],
    ['--summary-file', ['--summary-file', 'summary.md'], undefined],
    ['--summary-file - (stdin)', ['--summary-file', '-'], 'from stdin\nsecond line\n'],
  ]
  for (const [name, args, input] of summaries) {
    it(`takes the summary from ${name}`, async () => {
      const sb = sandbox()
      const runId = await startRun(sb)
      writeFileSync(join(sb.repo, 'summary.md'), '\uFEFFfrom a file\n\n')
      expectOk(await sb.cli(['coder-done', ...args], { input }))
      const expected = {
        '--summary': 'inline summary',
        '--summary-file': 'from a file',
        '--summary-file - (stdin)': 'from stdin\nsecond line',
      }[name]
      expect(sb.state(runId).rounds[0]!.coder.summary).toBe(expected)
    })
  }

  it('records the session id it is given', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    expect(expectOk(await sb.cli(['coder-done', '--session-id', 'abc-123'])).session_id).toBe('abc-123')
    expect(sb.state(runId).rounds[0]!.coder.session_id).toBe('abc-123')
  })

  it("finds the coder's session as the newest Claude transcript for the repository", async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const dir = claudeProjectDir(sb.repo, sb.env)
    mkdirSync(dir, { recursive: true })
    const older = join(dir, 'older-session.jsonl')
    writeFileSync(older, '{}\n')
    utimesSync(older, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    writeFileSync(join(dir, 'newest-session.jsonl'), '{}\n')
    expect(expectOk(await sb.cli(['coder-done'])).session_id).toBe('newest-session')
    expect(sb.state(runId).rounds[0]!.coder.session_id).toBe('newest-session')
  })

  it("finds a Codex coder's session from the rollout whose cwd is the repository", async () => {
    const sb = sandbox()
    await startRun(sb, ['--coder', 'codex', '--reviewer', 'claude'])
    const day = join(sb.env.CODEX_HOME!, 'sessions', '2026', '11', '30')
    mkdirSync(day, { recursive: true })
    const meta = (id: string, cwd: string) => `${JSON.stringify({ type: 'session_meta', payload: { id, cwd } })}\n`
    writeFileSync(join(day, 'rollout-2026-11-30T05-00-00-mine.jsonl'), meta('mine', sb.repo))
    writeFileSync(join(day, 'rollout-2026-11-30T05-00-01-elsewhere.jsonl'), meta('elsewhere', '/somewhere/else'))
    expect(expectOk(await sb.cli(['coder-done'])).session_id).toBe('mine')
  })

  it('refuses a second coder-done in review with wrong_phase, review next, and changes nothing', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    const before = runDisk(sb)
    const error = expectError(await sb.cli(['coder-done', '--summary', 'again']), 'wrong_phase')
    expect(error).toMatchObject({
      run_id: runId,
      phase: 'reviewing',
      next: 'review',
      expected_phase: ['coding', 'capped'],
    })
    expect(runDisk(sb)).toEqual(before)
  })

  it('refuses coder-done after approval with wrong_phase, finish next', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    await recordReview(sb.home, runId, 'VERDICT: APPROVED')
    expect(expectError(await sb.cli(['coder-done']), 'wrong_phase')).toMatchObject({
      phase: 'approved',
      next: 'finish',
    })
  })

  it('opens the next round after changes were requested, starting when the review ended', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    const reviewed = await recordReview(sb.home, runId, reviewWith(1))
    expect(expectOk(await sb.cli(['coder-done', '--summary', 'fixed'])).round).toBe(2)
    const state = sb.state(runId)
    expect(state.rounds.map((r) => r.n)).toEqual([1, 2])
    expect(state.rounds[1]!.coder.started_at).toBe(reviewed.rounds[0]!.reviewer!.at)
  })

  describe('at the round cap', () => {
    it('caps the run with ask-user next, refuses another round with round_cap, and goes on only with --over-cap', async () => {
      const sb = sandbox()
      const runId = await runInReview(sb, ['--max-rounds', '1'])
      const capped = await recordReview(sb.home, runId, reviewWith(1))
      expect(capped.phase).toBe('capped')
      expect(expectOk(await sb.cli(['status'])).next).toBe('ask-user')

      const before = runDisk(sb)
      const refused = await sb.cli(['coder-done', '--summary', 'one more'])
      expect(refused.code).toBe(11)
      expect(expectError(refused, 'round_cap')).toMatchObject({
        run_id: runId,
        max_rounds: 1,
        rounds: 1,
        next: 'ask-user',
      })
      expect(runDisk(sb)).toEqual(before)

      const doc = expectOk(await sb.cli(['coder-done', '--summary', 'one more', '--over-cap']))
      expect(doc).toMatchObject({ round: 2, next: 'review' })
      const state = sb.state(runId)
      expect(state.phase).toBe('reviewing')
      expect(state.rounds.map((r) => r.coder.over_cap)).toEqual([false, true])
    })

    it('records over_cap false when --over-cap is given within the cap', async () => {
      const sb = sandbox()
      const runId = await startRun(sb, ['--max-rounds', '2'])
      expectOk(await sb.cli(['coder-done', '--over-cap']))
      expect(sb.state(runId).rounds[0]!.coder.over_cap).toBe(false)
    })
  })

  describe('bad input', () => {
    const sb = sandbox()
    const dir = tempDir('pl-bodies-')
    let runId = ''
    const files: Record<string, string | Buffer> = {
      'empty.md': '',
      'blank.md': ' \n\t\n',
      'big.md': 'x'.repeat(MAX_BODY_BYTES + 1),
      'latin1.md': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      'half-utf8.md': Buffer.from([0xe2, 0x82]),
    }
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content)
    const cases: Array<[string, RegExp, string[], (string | Buffer)?]> = [
      ['a missing summary file', /does not exist/, ['--summary-file', join(dir, 'nope.md')]],
      ['an empty summary file', /is empty/, ['--summary-file', join(dir, 'empty.md')]],
      ['a blank summary file', /is empty/, ['--summary-file', join(dir, 'blank.md')]],
      [
        'an oversized summary file (> 64 KiB)',
        /65537 bytes; the limit is 65536/,
        ['--summary-file', join(dir, 'big.md')],
      ],
      ['a non-UTF-8 summary file', /not valid UTF-8/, ['--summary-file', join(dir, 'latin1.md')]],
      ['a summary file cut inside a character', /not valid UTF-8/, ['--summary-file', join(dir, 'half-utf8.md')]],
      ['a directory as the summary file', /not a regular file/, ['--summary-file', dir]],
      ['an empty stdin', /stdin .*is empty/, ['--summary-file', '-'], ''],
      ['an oversized stdin', /stdin .*the limit is 65536/, ['--summary-file', '-'], 'y'.repeat(MAX_BODY_BYTES + 1)],
      ['a non-UTF-8 stdin', /stdin .*not valid UTF-8/, ['--summary-file', '-'], Buffer.from([0xff, 0xfe, 0x41])],
      ['both --summary and --summary-file', /not both/, ['--summary', 'a', '--summary-file', '-'], 'b'],
      [
        'a --findings-addressed that is not a number',
        /--findings-addressed must be a whole number/,
        ['--findings-addressed', 'some'],
      ],
      ['a malformed run id', /malformed run id/, ['--run', '../x']],
      ['an unknown flag', /unknown flag --summry/, ['--summry', 'x']],
      ['a flag missing its value', /--session-id needs a value/, ['--session-id']],
    ]

    for (const [name, reason, args, input] of cases) {
      it(`refuses ${name} as usage and changes nothing`, async () => {
        runId ||= await startRun(sb)
        const before = runDisk(sb)
        expect(expectError(await sb.cli(['coder-done', ...args], { input }), 'usage').message).toMatch(reason)
        expect(runDisk(sb)).toEqual(before)
        expect(sb.state(runId).phase).toBe('coding')
      })
    }
  })

  it('accepts a summary of exactly 64 KiB', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const body = 'z'.repeat(MAX_BODY_BYTES)
    expectOk(await sb.cli(['coder-done', '--summary-file', '-'], { input: body }))
    expect(sb.state(runId).rounds[0]!.coder.summary).toBe(body)
  })

  it('reports run_not_found with no run here, and for an unknown --run', async () => {
    const sb = sandbox()
    expect(expectError(await sb.cli(['coder-done']), 'run_not_found').repo).toBe(sb.repo)
    expect(expectError(await sb.cli(['coder-done', '--run', '20261130-051500-abcdef']), 'run_not_found').run_id).toBe(
      '20261130-051500-abcdef',
    )
  })
})
