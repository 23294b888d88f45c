// Built-in reviewers by name: `--reviewer-cmd builtin:NAME` runs a stub shipped in the package, from any repository.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { builtinReviewerNames } from '../lib/review/builtin.ts'
import { parseReviewerCmd } from '../lib/review/reviewers.ts'
import { ROOT, sandbox } from './_helpers.ts'
import { expectError, expectOk, runInReview, thrown } from './_expect.ts'

/** The stubs as the folder lists them: every `.sh` but the sourced `_common.sh`. */
const STUBS = readdirSync(join(ROOT, 'fixtures', 'reviewers'))
  .filter((file) => file.endsWith('.sh') && !file.startsWith('_'))
  .map((file) => file.replace(/\.sh$/, ''))
  .sort()

const usageOf = (value: string) => thrown(() => parseReviewerCmd(value), `${value} was accepted`)

describe('builtin:NAME', () => {
  it('names every stub of fixtures/reviewers, approve and changes among them', () => {
    expect(builtinReviewerNames()).toEqual(STUBS)
    expect(STUBS).toEqual(expect.arrayContaining(['approve', 'changes']))
  })

  it('resolves to sh and the stub inside the package', () => {
    expect(parseReviewerCmd('builtin:changes')).toEqual(['sh', join(ROOT, 'fixtures', 'reviewers', 'changes.sh')])
    expect(parseReviewerCmd('builtin:approve')).toEqual(['sh', join(ROOT, 'fixtures', 'reviewers', 'approve.sh')])
  })

  const refused: Array<[string, string | undefined]> = [
    ['builtin:chnages', 'builtin:changes'],
    ['builtin:nope', undefined],
    ['builtin:', undefined],
    ['builtin:_common', undefined],
    ['builtin:../../etc/passwd', undefined],
  ]
  for (const [value, suggestion] of refused) {
    it(`refuses ${value} as usage listing the built-in names`, () => {
      const error = usageOf(value)
      expect(error.code).toBe('usage')
      expect(error.details).toMatchObject({ flag: '--reviewer-cmd', builtin: STUBS })
      expect(error.details.suggestion).toBe(suggestion)
    })
  }

  it('names the stubs a person uses, and the faults the tests use apart, each of them in the details', () => {
    const error = usageOf('builtin:nope')
    const faults = STUBS.filter((name) => !['approve', 'changes'].includes(name))
    expect(error.details).toMatchObject({ stubs: ['approve', 'changes'], faults })
    expect(error.message).toMatch(/; use builtin:approve \(approves\) or builtin:changes \(asks for .*\)/)
    expect(error.message).toContain(`the other ${faults.length} are faults for pair-loop's own tests`)
    expect(error.message).toContain('fixtures/reviewers/README.md')
    // the faults are not offered as reviewers: a few named as examples, never the whole list
    expect(error.message).not.toContain(faults.map((name) => `builtin:${name}`).join(', '))
    expect(error.message.indexOf('builtin:hang')).toBeGreaterThan(error.message.indexOf('faults'))
  })

  it('keeps JSON arrays as they were', () => {
    expect(parseReviewerCmd('["sh","review.sh"]')).toEqual(['sh', 'review.sh'])
    expect(usageOf('sh review.sh').message).toMatch(/JSON array of strings.*or builtin:NAME/)
  })
})

describe('review --reviewer-cmd builtin:NAME in a repository that has no stubs', () => {
  it('builtin:changes requests changes with its two findings, then builtin:approve approves', async () => {
    const sb = sandbox()
    await runInReview(sb)
    const changes = expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes']))
    expect(changes).toMatchObject({ verdict: 'CHANGES_REQUESTED', reviewer: { tool: 'custom' } })
    expect(changes.findings.map((f: { path: string }) => f.path)).toEqual(['src/a.ts', 'src/a.test.ts'])
    expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
    expect(expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:approve'])).verdict).toBe('APPROVED')
  })

  it('an unknown name is usage, and the run stays in review', async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    const error = expectError(await sb.cli(['review', '--reviewer-cmd', 'builtin:aprove']), 'usage')
    expect(error.suggestion).toBe('builtin:approve')
    expect(sb.state(runId).phase).toBe('reviewing')
  })
})
