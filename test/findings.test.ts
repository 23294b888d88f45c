import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import AjvDraft04 from 'ajv-draft-04'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT, recordReview, sandbox } from './_helpers.ts'
import { expectError, expectOk, type Sandbox, writeChange } from './_expect.ts'

const schema = JSON.parse(
  readFileSync(join(ROOT, 'node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'),
)
const Ajv = AjvDraft04.default // a CommonJS module: node and bun agree on .default
const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false, validateFormats: false, logger: false })
const validateSarif = ajv.compile(schema)
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const PACKAGE_VERSION = PACKAGE.version
/** A web page is named only where package.json gives one: pair-loop is not on npm, so no npm page may be made up. */
const PAGE_GIVEN = Boolean(PACKAGE.homepage || PACKAGE.repository)

function expectValidSarif(log: unknown) {
  const valid = validateSarif(log)
  expect(validateSarif.errors ?? [], JSON.stringify(validateSarif.errors, null, 2)).toEqual([])
  expect(valid).toBe(true)
}

const REVIEW = [
  'A few problems.',
  '1. [security/blocker] src/auth.ts:41-48 — token compared with "==", not timing-safe',
  '2. [correctness/major] src/loop.ts:7 — off by one in the "end" bound',
  '3. [style/minor] src/weird#50%.ts:3 — odd \x1b[31mred\x1b[0m name with a "quote" and a back\\slash',
  '4. [docs/nit] README.md:1 — typo',
  '5. [architecture] the module boundaries are blurry',
  '   and this continues the finding on a second line',
  '6. [correctness] ./lib/x.ts:12 — no severity given',
  'VERDICT: CHANGES_REQUESTED',
].join('\n')

const WONT_FIX = 'Not a real risk: the "token" is\npublic anyway.\x1b[31m <script>'
/** The answer as stored: the escape sequence dropped at entry (by hand), the rest as written. */
const WONT_FIX_STORED = 'Not a real risk: the "token" is\npublic anyway. <script>'

async function startRun(sb: Sandbox): Promise<string> {
  const runId = expectOk(await sb.cli(['start', '--task', 'export findings'])).run_id
  writeChange(sb)
  expectOk(await sb.cli(['coder-done', '--summary', 'first pass']))
  return runId
}

async function reply(sb: Sandbox, finding: string, disposition: string, body: string) {
  expectOk(
    await sb.cli(['reply', '--finding', finding, '--disposition', disposition, '--body-file', '-'], { input: body }),
  )
}

async function sarifOf(sb: Sandbox, extra: string[] = []) {
  const result = await sb.cli(['findings', '--format', 'sarif', ...extra])
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout.endsWith('\n') && result.stdout.indexOf('\n') === result.stdout.length - 1).toBe(true)
  return { stdout: result.stdout, log: JSON.parse(result.stdout) }
}

describe('findings', () => {
  let sb: Sandbox
  let runId: string

  beforeAll(async () => {
    sb = sandbox()
    runId = await startRun(sb)
    await recordReview(sb.home, runId, REVIEW)
    await reply(sb, '1.1', 'wont-fix', WONT_FIX)
    await reply(sb, '1.2', 'fixed', 'moved the bound')
  })

  it('prints the findings with their replies as one pair-loop document (json is the default)', async () => {
    const doc = expectOk(await sb.cli(['findings']))
    expect(expectOk(await sb.cli(['findings', '--format', 'json']))).toEqual(doc)
    const findings = sb.state(runId).rounds[0]!.reviewer!.findings
    expect(doc).toMatchObject({ version: 1, run_id: runId, verdict: 'CHANGES_REQUESTED' })
    expect(doc.findings.map((f: any) => f.id)).toEqual(['1.1', '1.2', '1.3', '1.4', '1.5', '1.6'])
    expect(doc.findings[0]).toEqual({
      ...findings[0],
      reply: { disposition: 'wont-fix', body: WONT_FIX_STORED, at: expect.any(String), comment_url: null },
      status: 'answered',
    })
    expect(doc.findings[1]).toMatchObject({
      reply: { disposition: 'fixed', body: 'moved the bound' },
      status: 'answered',
    })
    expect(doc.findings[2]).toEqual({ ...findings[2], reply: null, status: 'open' })
    expect(doc.findings[4]).toMatchObject({
      category: 'architecture',
      path: null,
      severity: null,
      text: expect.stringContaining('second line'),
    })
  })

  it('exports a SARIF 2.1.0 log that the official schema accepts', async () => {
    const { log } = await sarifOf(sb)
    expectValidSarif(log)
    expect(log.version).toBe('2.1.0')
    // the validator is live: it refuses what SARIF forbids
    const broken = structuredClone(log)
    broken.runs[0].results[0].level = 'fatal'
    broken.runs[0].results[1].locations[0].physicalLocation.region.startLine = 0
    expect(validateSarif(broken)).toBe(false)
    expect(validateSarif.errors!.map((e) => e.instancePath)).toEqual(
      expect.arrayContaining([
        '/runs/0/results/0/level',
        '/runs/0/results/1/locations/0/physicalLocation/region/startLine',
      ]),
    )
    expect(log.$schema).toMatch(/^https:\/\/.*sarif.*2\.1\.0.*\.json$/)
    expect(log.runs).toHaveLength(1)
    const [run] = log.runs
    expect(run.tool.driver).toMatchObject({ name: 'pair-loop', version: PACKAGE_VERSION })
    expect('informationUri' in run.tool.driver).toBe(PAGE_GIVEN)
    if (PAGE_GIVEN) expect(run.tool.driver.informationUri).toMatch(/^https:\/\//)
    expect(JSON.stringify(log)).not.toContain('npmjs.com')
    expect(run.automationDetails.id).toBe(`pair-loop/${runId}/`)
    expect(run.originalUriBaseIds['%SRCROOT%'].uri).toBe(`${pathToFileURL(sb.repo).href}/`)
  })

  it('has one rule per category, and results that point at their rule with a level from the severity', async () => {
    const { log } = await sarifOf(sb)
    const [run] = log.runs
    const rules = run.tool.driver.rules
    expect(rules.map((r: any) => r.id)).toEqual([
      'pair-loop/architecture',
      'pair-loop/correctness',
      'pair-loop/docs',
      'pair-loop/security',
      'pair-loop/style',
    ])
    for (const rule of rules) {
      expect(rule.shortDescription.text).toBeTruthy()
      expect(rule.properties.tags).toContain(rule.id.slice('pair-loop/'.length))
    }
    for (const result of run.results) expect(rules[result.ruleIndex].id).toBe(result.ruleId)
    expect(run.results.map((r: any) => [r.properties.id, r.ruleId, r.level])).toEqual([
      ['1.1', 'pair-loop/security', 'error'],
      ['1.2', 'pair-loop/correctness', 'error'],
      ['1.3', 'pair-loop/style', 'warning'],
      ['1.4', 'pair-loop/docs', 'note'],
      ['1.5', 'pair-loop/architecture', 'warning'],
      ['1.6', 'pair-loop/correctness', 'warning'],
    ])
    expect(run.results[0].properties).toEqual({
      id: '1.1',
      round: 1,
      severity: 'blocker',
      recurring: false,
      recurring_of: null,
      reviewer_tool: 'codex',
      disposition: 'wont-fix',
    })
  })

  it('places findings in the repository, and leaves a pathless finding without a location', async () => {
    const { log } = await sarifOf(sb)
    const at = (i: number) => log.runs[0].results[i].locations?.[0]?.physicalLocation
    expect(at(0)).toEqual({
      artifactLocation: { uri: 'src/auth.ts', uriBaseId: '%SRCROOT%' },
      region: { startLine: 41, endLine: 48 },
    })
    expect(at(1)).toEqual({
      artifactLocation: { uri: 'src/loop.ts', uriBaseId: '%SRCROOT%' },
      region: { startLine: 7, endLine: 7 },
    })
    expect(at(2).artifactLocation.uri).toBe('src/weird%2350%25.ts')
    expect(at(5).artifactLocation.uri).toBe('lib/x.ts')
    expect(log.runs[0].results[4].locations).toBeUndefined()
    expect(log.runs[0].results[4].message.text).toContain('module boundaries are blurry')
  })

  it('fingerprints each result with its finding key, the same on every export', async () => {
    const first = await sarifOf(sb)
    const second = await sarifOf(sb, ['--run', runId, '--cwd', sb.home])
    expect(second.stdout).toBe(first.stdout)
    const keys = sb.state(runId).rounds[0]!.reviewer!.findings.map((f) => f.key)
    expect(first.log.runs[0].results.map((r: any) => r.partialFingerprints['pairLoop/v1'])).toEqual(keys)
  })

  it('suppresses the disputed finding under review, carrying the reply, and keeps agent text clean', async () => {
    const { stdout, log } = await sarifOf(sb)
    const results = log.runs[0].results
    expect(results[0].suppressions).toEqual([
      {
        kind: 'external',
        status: 'underReview',
        justification: 'Not a real risk: the "token" is\npublic anyway. <script>',
      },
    ])
    for (const result of results.slice(1)) expect(result.suppressions).toEqual([])
    expect(results[2].message.text).toBe('odd red name with a "quote" and a back\\slash')
    expect(stdout).not.toMatch(/\x1b|\\u001b/)
  })

  it('exports reviewdog rdjsonl, one diagnostic per line, skipping the pathless finding with a note', async () => {
    const result = await sb.cli(['findings', '--format', 'rdjsonl'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.endsWith('\n')).toBe(true)
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines).toHaveLength(5)
    expect(lines.map((d) => d.location.path)).toEqual([
      'src/auth.ts',
      'src/loop.ts',
      'src/weird#50%.ts',
      'README.md',
      'lib/x.ts',
    ])
    expect(lines.some((d) => d.message.includes('module boundaries'))).toBe(false)
    expect(lines[0]).toEqual({
      message: 'token compared with "==", not timing-safe',
      location: { path: 'src/auth.ts', range: { start: { line: 41 }, end: { line: 48 } } },
      severity: 'ERROR',
      source: PAGE_GIVEN ? { name: 'pair-loop', url: expect.stringMatching(/^https:\/\//) } : { name: 'pair-loop' },
      code: { value: 'security' },
      original_output: '1. [security/blocker] src/auth.ts:41-48 — token compared with "==", not timing-safe',
    })
    expect(lines.map((d) => d.severity)).toEqual(['ERROR', 'ERROR', 'WARNING', 'INFO', 'WARNING'])
    expect(result.stderr).toMatch(/1 finding.*without a path.*1\.5/)
  })

  it('marks the suppression accepted once the run is approved, and still lists earlier findings', async () => {
    const later = sandbox()
    const id = await startRun(later)
    await recordReview(later.home, id, REVIEW)
    await reply(later, '1.1', 'wont-fix', WONT_FIX)
    expectOk(await later.cli(['coder-done', '--summary', 'second pass']))
    await recordReview(later.home, id, 'All good now.\nVERDICT: APPROVED')
    expect(expectOk(await later.cli(['findings'])).verdict).toBe('APPROVED')
    const { log } = await sarifOf(later)
    expectValidSarif(log)
    expect(log.runs[0].results).toHaveLength(6)
    expect(log.runs[0].results[0].suppressions).toEqual([
      expect.objectContaining({ kind: 'external', status: 'accepted' }),
    ])
  })

  it('refuses an unknown format as usage', async () => {
    const error = expectError(await sb.cli(['findings', '--format', 'bogus']), 'usage')
    expect(error.message).toMatch(/bogus/)
  })

  it("refuses --text with another tool's format as usage, saying to give one of them", async () => {
    for (const format of ['sarif', 'rdjsonl']) {
      const refused = await sb.cli(['findings', '--format', format, '--text'])
      expect(refused.code, refused.stdout).toBe(2)
      expect(refused.stdout).toMatch(/^error: usage \(exit 2\): --text shows the findings for a person/)
    }
  })
})

describe('findings of a run with no reviews', () => {
  it('prints an empty list, a valid SARIF log with no results, and no rdjsonl at all', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    expect(expectOk(await sb.cli(['findings']))).toEqual({ version: 1, run_id: runId, verdict: null, findings: [] })
    const { log } = await sarifOf(sb)
    expectValidSarif(log)
    expect(log.runs[0].results).toEqual([])
    expect(log.runs[0].tool.driver.rules).toEqual([])
    const rd = await sb.cli(['findings', '--format', 'rdjsonl'])
    expect(rd.code, rd.stderr).toBe(0)
    expect(rd.stdout).toBe('')
    expect(rd.stderr).toBe('')
  })

  it('says run_not_found outside any run', async () => {
    const sb = sandbox()
    expectError(await sb.cli(['findings', '--format', 'sarif']), 'run_not_found')
  })
})
