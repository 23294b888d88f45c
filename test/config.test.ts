import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULTS, REPO_CONFIG_NAME, loadConfig } from '../lib/run/config.ts'
import { configPath } from '../lib/ground/paths.ts'
import { setTrust } from '../lib/run/trust.ts'
import { makeRepo, sandbox, tempDir } from './_helpers.ts'
import { expectError, expectOk, runDisk, startRun, thrown } from './_expect.ts'

function writeJson(path: string, value: unknown) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value))
}

const sha256Of = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

const configError = (fn: () => unknown) => thrown(fn)

describe('loadConfig', () => {
  it('gives the defaults of DESIGN.md when there is no config file', () => {
    const config = loadConfig({ home: tempDir() })
    expect(config).toEqual({ ...DEFAULTS, sources: [] })
    expect(config.pair_loop).toMatchObject({
      coder: 'claude',
      reviewer: 'codex',
      max_rounds: 3,
      reviewer_timeout_s: 900,
      max_diff_bytes: 200000,
      reviewer_cmd: null,
    })
    expect(config.budget).toEqual({ per_run_usd: null, warn_ratio: 0.8 })
  })

  it('merges the home file and then the trusted repository file key by key, the repository winning', async () => {
    const home = tempDir()
    const repo = tempDir()
    writeJson(configPath(home), {
      pair_loop: { coder: 'codex', max_rounds: 5 },
      budget: { per_run_usd: 2 },
      pricing: { m1: { input: 1, output: 2 } },
    })
    writeJson(join(repo, REPO_CONFIG_NAME), { pair_loop: { max_rounds: 7 }, pricing: { m2: { input: 3, output: 4 } } })
    await setTrust(join(repo, REPO_CONFIG_NAME), sha256Of(join(repo, REPO_CONFIG_NAME)), home)
    const config = loadConfig({ home, repo })
    expect(config.pair_loop).toMatchObject({ coder: 'codex', reviewer: 'codex', max_rounds: 7 })
    expect(config.budget).toEqual({ per_run_usd: 2, warn_ratio: 0.8 })
    expect(Object.keys(config.pricing).sort()).toEqual(['m1', 'm2'])
    expect(config.sources.map((source) => source.path)).toEqual([configPath(home), join(repo, REPO_CONFIG_NAME)])
    expect(config.sources.map((source) => source.sha256)).toEqual(
      [configPath(home), join(repo, REPO_CONFIG_NAME)].map(sha256Of),
    )
  })

  it('does not let one load change the defaults of the next', () => {
    const home = tempDir()
    writeJson(configPath(home), { pair_loop: { max_rounds: 9 } })
    loadConfig({ home })
    expect(loadConfig({ home: tempDir() }).pair_loop.max_rounds).toBe(3)
  })

  // [what, content, the key at fault (null: the whole file), what the message says in plain words]
  const invalid: Array<[string, unknown, string | null, RegExp]> = [
    ['bad JSON', '{"pair_loop": {', null, /is not valid JSON.*: fix it, or remove the file/],
    [
      'an unknown top-level key',
      { pairloop: {} },
      'pairloop',
      /unknown key "pairloop" in .* \(did you mean "pair_loop"\?\)/,
    ],
    [
      'an unknown key in a section',
      { pair_loop: { max_round: 3 } },
      'pair_loop.max_round',
      /did you mean "max_rounds"/,
    ],
    [
      'an unknown key in a price',
      { pricing: { m: { input: 1, output: 2, cache_wirte: 1 } } },
      'pricing.m.cache_wirte',
      /unknown key "cache_wirte" .*remove or rename it \("pricing\.m" takes input, output/,
    ],
    [
      'a wrong type',
      { pair_loop: { max_rounds: '3' } },
      'pair_loop.max_rounds',
      /must be a whole number, 1 or more, not "3"/,
    ],
    [
      'a value out of range',
      { budget: { warn_ratio: 1.5 } },
      'budget.warn_ratio',
      /must be a number from 0 to 1, not 1\.5/,
    ],
    [
      'an unknown agent',
      { pair_loop: { reviewer: 'aider' } },
      'pair_loop.reviewer',
      /must be "claude", "codex" or "gemini"/,
    ],
    ['a JSON array', [], null, /must hold one JSON object/],
  ]
  for (const [name, content, key, words] of invalid) {
    for (const where of ['home', 'repo'] as const) {
      it(`refuses ${name} in the ${where} file as config_invalid naming the file and the key`, () => {
        const home = tempDir()
        const repo = tempDir()
        const file = where === 'home' ? configPath(home) : join(repo, REPO_CONFIG_NAME)
        writeJson(file, content)
        const error = configError(() => loadConfig({ home, repo }))
        expect(error.code).toBe('config_invalid')
        expect(error.details.path).toBe(file)
        expect(error.message).toContain(file)
        expect(error.message).toMatch(words)
        expect(error.details.keys).toEqual(key === null ? [] : [key])
      })
    }
  }
})

describe('start with an invalid config', () => {
  const cases: Array<[string, 'home' | 'repo', string, string]> = [
    ['bad JSON', 'home', '{ nope', 'JSON'],
    ['an unknown key', 'home', JSON.stringify({ pair_loop: { reveiwer: 'codex' } }), 'pair_loop.reveiwer'],
    ['a wrong type', 'home', JSON.stringify({ budget: { per_run_usd: 'ten' } }), 'budget.per_run_usd'],
    ['an unknown key in the repository file', 'repo', JSON.stringify({ budjet: {} }), 'budjet'],
  ]
  for (const [name, where, content, key] of cases) {
    it(`fails with config_invalid (exit 5) on ${name} and changes nothing`, async () => {
      const sb = sandbox()
      const file = where === 'home' ? configPath(sb.home) : join(sb.repo, REPO_CONFIG_NAME)
      writeJson(file, content)
      const before = runDisk(sb)
      const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_invalid')
      expect(error.path).toBe(file)
      expect(`${error.message} ${error.keys.join(' ')}`).toContain(key)
      expect(runDisk(sb)).toEqual(before)
    })
  }

  it('uses a valid committed repository config over the home config', async () => {
    const repo = makeRepo({
      'README.md': 'x\n',
      [REPO_CONFIG_NAME]: JSON.stringify({ pair_loop: { reviewer: 'claude', max_rounds: 4 } }),
    })
    const sb = { ...sandbox(), repo }
    writeJson(configPath(sb.home), { pair_loop: { coder: 'codex', max_rounds: 2 }, budget: { per_run_usd: 1.5 } })
    const doc = expectOk(await sb.cli(['start', '--task', 'x'], { cwd: repo }))
    expect(doc).toMatchObject({ coder: 'codex', reviewer: 'claude', max_rounds: 4, budget_usd: 1.5 })
  })
})

describe('a config file broken or changed since start', () => {
  const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('pair-loop: warning:'))

  it('a broken config.json is said once on stderr and in status, which goes on with the frozen config', async () => {
    const sb = sandbox()
    writeJson(configPath(sb.home), { pair_loop: { max_rounds: 2 } })
    const runId = await startRun(sb)
    writeJson(configPath(sb.home), '{"pair_loop": {')
    const result = await sb.cli(['status'])
    const doc = expectOk(result)
    expect(doc).toMatchObject({ max_rounds: 2, config_changed: true })
    expect(doc.config_warnings).toEqual([
      { path: configPath(sb.home), drift: 'broken', message: expect.stringContaining('is not valid JSON') },
    ])
    expect(doc.config_warnings[0].message).toContain(`run ${runId} goes on with the config frozen at its start`)
    expect(warnings(result.stderr)).toEqual([`pair-loop: warning: ${doc.config_warnings[0].message}`])
  })

  it('a changed .pair-loop.json is said once by each command, coder-done and budget-check, which go on', async () => {
    const sb = sandbox({ 'README.md': 'x\n', [REPO_CONFIG_NAME]: JSON.stringify({ pair_loop: { max_rounds: 2 } }) })
    const runId = await startRun(sb)
    writeJson(join(sb.repo, REPO_CONFIG_NAME), { pair_loop: { max_rounds: 5 } })
    const said = `pair-loop: warning: ${REPO_CONFIG_NAME} changed since run ${runId} started; the run goes on with the config frozen at its start (the next \`pair-loop start\` reads the file as it is now)`
    const handedOver = await sb.cli(['coder-done', '--summary', 'x'])
    expect(expectOk(handedOver).next).toBe('review')
    expect(warnings(handedOver.stderr)).toEqual([said])
    const checked = await sb.cli(['budget-check'])
    expect(checked.code).toBe(0)
    expect(warnings(checked.stderr)).toEqual([said])
    expect(sb.state(runId).max_rounds).toBe(2)
  })

  it('says nothing while the files are what the run started under', async () => {
    const sb = sandbox()
    writeJson(configPath(sb.home), { pair_loop: { max_rounds: 2 } })
    await startRun(sb)
    const result = await sb.cli(['status'])
    expect(expectOk(result)).toMatchObject({ config_changed: false, config_warnings: [] })
    expect(warnings(result.stderr)).toEqual([])
  })

  it('says nothing on stderr for a finished run, which goes on with no config', async () => {
    const sb = sandbox()
    await startRun(sb)
    expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
    writeJson(configPath(sb.home), '{ nope')
    const result = await sb.cli(['status'])
    expect(expectOk(result).config_changed).toBe(true)
    expect(warnings(result.stderr)).toEqual([])
  })
})
