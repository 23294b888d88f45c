import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_BODY_BYTES } from '../lib/ground/body-input.ts'
import { renderHandoff } from '../lib/run/handoff.ts'
import { DISPOSITIONS } from '../lib/run/state.ts'
import { recordReview, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, reviewWith, runDisk, runInReview, type Sandbox } from './_expect.ts'

/** A run whose round 1 was reviewed with `findings` findings (phase coding, reply next). */
async function reviewedRun(sb: Sandbox, findings = 2): Promise<string> {
  const runId = await runInReview(sb)
  await recordReview(sb.home, runId, reviewWith(findings))
  return runId
}

const replyArgs = (finding: string, disposition = 'fixed') => [
  'reply',
  '--finding',
  finding,
  '--disposition',
  disposition,
  '--body-file',
  '-',
]

describe('reply', () => {
  it("records the coder's answer to a finding, once, and shows it in HANDOFF.md", async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb)
    const before = sb.state(runId)
    const doc = expectOk(await sb.cli(replyArgs('1.2', 'wont-fix'), { input: 'by design:\nthe bound is inclusive\n' }))
    expect(doc).toMatchObject({
      version: 1,
      run_id: runId,
      key: `${runId}:reply:1.2`,
      finding: '1.2',
      disposition: 'wont-fix',
      posted: false,
    })
    const state = sb.state(runId)
    expect(state.revision).toBe(before.revision + 1)
    expect(state.replies).toEqual({
      '1.2': {
        finding: '1.2',
        key: before.rounds[0]!.reviewer!.findings[1]!.key,
        disposition: 'wont-fix',
        body: 'by design:\nthe bound is inclusive',
        at: expect.any(String),
        comment_url: null,
      },
    })
    const handoff = readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')
    expect(handoff).toBe(renderHandoff(state))
    expect(handoff).toContain(
      '2. [bug/minor] src/f2.ts:2 — problem number 2\n   reply (wont-fix): by design:\n   the bound is inclusive\n',
    )
  })

  for (const disposition of DISPOSITIONS) {
    it(`accepts the disposition ${disposition}`, async () => {
      const sb = sandbox()
      const runId = await reviewedRun(sb, 1)
      expectOk(await sb.cli(replyArgs('1.1', disposition), { input: 'answer' }))
      expect(sb.state(runId).replies['1.1']!.disposition).toBe(disposition)
    })
  }

  it('reads the body from a file relative to the directory it works in (--cwd when given)', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb, 2)
    const dir = tempDir()
    writeFileSync(join(dir, 'answer.md'), 'relative to the process\n')
    writeFileSync(join(sb.repo, 'answer.md'), 'relative to --cwd\n')
    expectOk(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'ack', '--body-file', 'answer.md', '--run', runId], {
        cwd: dir,
      }),
    )
    expectOk(
      await sb.cli(
        ['reply', '--finding', '1.2', '--disposition', 'ack', '--body-file', 'answer.md', '--cwd', sb.repo],
        { cwd: dir },
      ),
    )
    expect(sb.state(runId).replies['1.1']!.body).toBe('relative to the process')
    expect(sb.state(runId).replies['1.2']!.body).toBe('relative to --cwd')
  })

  it('moves next from reply to coder-done once every open finding has an answer', async () => {
    const sb = sandbox()
    await reviewedRun(sb, 2)
    const open = expectOk(await sb.cli(['status']))
    expect(open).toMatchObject({ next: 'reply', phase: 'coding' })
    expect(open.open_findings.map((f: { id: string }) => f.id)).toEqual(['1.1', '1.2'])
    expectOk(await sb.cli(replyArgs('1.1'), { input: 'done' }))
    expect(expectOk(await sb.cli(['status'])).next).toBe('reply')
    expectOk(await sb.cli(replyArgs('1.2'), { input: 'done' }))
    expect(expectOk(await sb.cli(['status']))).toMatchObject({ next: 'coder-done', open_findings: [] })
  })

  it('answers a finding of an earlier round while the next round is in review', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb, 1)
    expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
    expectOk(await sb.cli(replyArgs('1.1', 'question'), { input: 'what did you mean?' }))
    expect(sb.state(runId)).toMatchObject({ phase: 'reviewing', replies: { '1.1': { disposition: 'question' } } })
  })

  it('refuses a second answer with duplicate_reply (exit 4) returning what is recorded, and changes nothing', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb)
    expectOk(await sb.cli(replyArgs('1.1', 'fixed'), { input: 'first answer' }))
    const recorded = sb.state(runId).replies['1.1']
    const before = runDisk(sb)
    const result = await sb.cli(replyArgs('1.1', 'wont-fix'), { input: 'second answer' })
    expect(result.code).toBe(4)
    const error = expectError(result, 'duplicate_reply')
    expect(error).toMatchObject({ run_id: runId, key: `${runId}:reply:1.1`, recorded })
    expect(runDisk(sb)).toEqual(before)
  })

  it('refuses an unknown finding with finding_not_found listing the known ones, and changes nothing', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb, 2)
    const before = runDisk(sb)
    for (const finding of ['1.3', '2.1', '9.9']) {
      const error = expectError(await sb.cli(replyArgs(finding), { input: 'x' }), 'finding_not_found')
      expect(error).toMatchObject({ run_id: runId, finding, known: ['1.1', '1.2'] })
    }
    expect(runDisk(sb)).toEqual(before)
  })

  it('refuses any finding before a review exists with finding_not_found', async () => {
    const sb = sandbox()
    await runInReview(sb)
    expect(expectError(await sb.cli(replyArgs('1.1'), { input: 'x' }), 'finding_not_found').known).toEqual([])
  })

  it('refuses a finished run with wrong_phase and no next step', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb, 1)
    expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
    const before = runDisk(sb)
    expect(
      expectError(await sb.cli([...replyArgs('1.1'), '--run', runId], { input: 'late' }), 'wrong_phase'),
    ).toMatchObject({ phase: 'finished', next: null })
    expectError(await sb.cli(replyArgs('1.1'), { input: 'late' }), 'run_not_found')
    expect(runDisk(sb)).toEqual(before)
  })

  describe('bad input', () => {
    const sb = sandbox()
    const dir = tempDir('pl-bodies-')
    const files: Record<string, string | Buffer> = {
      'empty.md': '',
      'blank.md': '\n   \n',
      'big.md': 'é'.repeat(MAX_BODY_BYTES / 2 + 1),
      'latin1.md': Buffer.from('caf\xe9 au lait\n', 'latin1'),
      'nul-free-but-invalid.md': Buffer.from([0x41, 0xc0, 0xaf]),
    }
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content)
    const at = (name: string) => join(dir, name)
    const base = ['reply', '--finding', '1.1', '--disposition', 'fixed']
    const cases: Array<[string, RegExp, string[], (string | Buffer)?]> = [
      ['a missing body file', /does not exist/, [...base, '--body-file', at('nope.md')]],
      ['an empty body file', /is empty/, [...base, '--body-file', at('empty.md')]],
      ['a blank body file', /is empty/, [...base, '--body-file', at('blank.md')]],
      ['an oversized body file (> 64 KiB)', /65538 bytes; the limit is 65536/, [...base, '--body-file', at('big.md')]],
      ['a non-UTF-8 body file', /not valid UTF-8/, [...base, '--body-file', at('latin1.md')]],
      ['an overlong UTF-8 encoding', /not valid UTF-8/, [...base, '--body-file', at('nul-free-but-invalid.md')]],
      ['a directory as the body file', /not a regular file/, [...base, '--body-file', dir]],
      ['an empty stdin', /stdin .*is empty/, [...base, '--body-file', '-'], ''],
      [
        'an oversized stdin',
        /stdin .*the limit is 65536/,
        [...base, '--body-file', '-'],
        'q'.repeat(MAX_BODY_BYTES + 1),
      ],
      ['a non-UTF-8 stdin', /stdin .*not valid UTF-8/, [...base, '--body-file', '-'], Buffer.from([0x80, 0x81])],
      ['no --body-file', /--body-file/, base],
      ['no --disposition', /missing required flag --disposition/, ['reply', '--finding', '1.1', '--body-file', '-']],
      [
        'a bad disposition',
        /disposition.*wontfix/,
        ['reply', '--finding', '1.1', '--disposition', 'wontfix', '--body-file', '-'],
      ],
      ['no --finding', /--finding/, ['reply', '--disposition', 'fixed', '--body-file', '-']],
      [
        'a malformed finding id',
        /--finding must look like/,
        ['reply', '--finding', '1', '--disposition', 'fixed', '--body-file', '-'],
      ],
      ['a malformed run id', /malformed run id/, [...base, '--body-file', '-', '--run', '../x'], 'a valid body'],
      ['an unknown flag', /unknown flag --post/, [...base, '--body-file', '-', '--post']],
      ['a flag missing its value', /--body-file needs a value/, [...base, '--body-file']],
    ]
    let runId = ''
    for (const [name, reason, args, input] of cases) {
      it(`refuses ${name} as usage and changes nothing`, async () => {
        runId ||= await reviewedRun(sb, 1)
        const before = runDisk(sb)
        expect(expectError(await sb.cli(args, { input }), 'usage').message).toMatch(reason)
        expect(runDisk(sb)).toEqual(before)
        expect(sb.state(runId).replies).toEqual({})
      })
    }
  })

  it('accepts a body of exactly 64 KiB from stdin', async () => {
    const sb = sandbox()
    const runId = await reviewedRun(sb, 1)
    const body = 'w'.repeat(MAX_BODY_BYTES)
    expectOk(await sb.cli(replyArgs('1.1'), { input: body }))
    expect(sb.state(runId).replies['1.1']!.body).toBe(body)
  })
})
