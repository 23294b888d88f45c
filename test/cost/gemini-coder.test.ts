// A Gemini CLI coder's spend (issue 35, item 2): its session files, found by the project root Gemini CLI records,
// read incrementally into the round windows, each message id once, each response priced on its own. Expected USD are
// hand counts from the token counts and Google's published rates (docs/reference/gemini-cli.md, USD per million:
// gemini-2.5-pro 1.25 in / 0.125 cached / 10 out, prompts over 200k 2.50 / 0.25 / 15; gemini-2.5-flash 0.30 / 0.03 /
// 2.50), never from the code under test.
import { mkdirSync, realpathSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CODER_READERS } from '../../lib/cost/coder-readers.ts'
import { currentCoderSession } from '../../lib/cost/coder.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import type { RunState } from '../../lib/run/state.ts'
import { expectError } from '../_expect.ts'
import { sandbox, tempDir, writeTestHomeConfig } from '../_helpers.ts'
import { coderRound, makeRun, writeLines } from './_gen.ts'

const SID = '9e1a0000-1111-4222-8333-444455556666'
const OTHER = '9e1b0000-1111-4222-8333-777788889999'
const PRO = 'gemini-2.5-pro'
const FLASH = 'gemini-2.5-flash'
const HOUR = 3_600_000
const at = (ms: number) => new Date(ms).toISOString()

/** prompt (cached included), cached, candidates, thoughts, tool: as the session file's `tokens` holds them. */
type Counts = [number, number, number, number?, number?]

/** Records shaped as Gemini CLI 0.61.0 writes them (docs/reference/gemini-cli.md, "The session file"). */
const meta = (sessionId: string) => ({
  sessionId,
  projectHash: 'ab'.repeat(32),
  startTime: at(Date.now()),
  lastUpdated: at(Date.now()),
  kind: 'main',
})
const user = (id: string, ms: number) => ({ id, timestamp: at(ms), type: 'user', content: [{ text: 'go on' }] })
function reply(id: string, ms: number, model: string, [input, cached, output, thoughts = 0, tool = 0]: Counts) {
  const tokens = { input, output, cached, thoughts, tool, total: input + output + thoughts + tool }
  return { id, timestamp: at(ms), type: 'gemini', content: 'done', thoughts: [], tokens, model }
}

/** A Gemini home with the project folder Gemini CLI 0.61.0 makes for `root` (`tmp/<slug>/.project_root`). */
function projectFolder(geminiHome: string, root: string, slug = 'repo'): string {
  const folder = join(geminiHome, '.gemini', 'tmp', slug)
  mkdirSync(join(folder, 'chats'), { recursive: true })
  writeFileSync(join(folder, '.project_root'), root)
  return folder
}

/** `chats/session-<minute>-<id8>.jsonl`: the metadata record, then `records` (appended when the file exists). */
function sessionFile(
  folder: string,
  records: Array<Record<string, unknown>>,
  { id = SID, minute = '2026-12-07T10-00', append = false } = {},
) {
  const path = join(folder, 'chats', `session-${minute}-${id.slice(0, 8)}.jsonl`)
  writeLines(path, append ? records : [meta(id), ...records], { append })
  return path
}

function homes() {
  const root = tempDir('pl-gemini-coder-')
  const repo = join(root, 'repo')
  mkdirSync(join(repo, 'packages', 'web'), { recursive: true })
  const env = { HOME: root, GEMINI_CLI_HOME: join(root, 'gemini'), PAIR_LOOP_HOME: join(root, 'pl') }
  return { root, repo: realpathSync(repo), env }
}

/** A run of a Gemini coder that began an hour ago, still coding; `done` holds each coder-done's time. */
const geminiRun = (repo: string, start: number, done: number[] = [], over: Partial<RunState> = {}) =>
  makeRun({
    repo,
    coder: 'gemini',
    phase: 'coding',
    created_at: at(start),
    rounds: done.map((ms, k) => coderRound(k + 1, null, at(ms))),
    ...over,
  })

describe("a Gemini coder's spend", () => {
  it('is each response in the round window its timestamp falls in, at its own model’s rates', () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    const folder = projectFolder(env.GEMINI_CLI_HOME, repo)
    sessionFile(folder, [
      user('u1', t0 + 1_000),
      // (12000 − 8000) × 1.25 + 8000 × 0.125 + (500 + 200) × 10 = 5000 + 1000 + 7000 per million = $0.013
      reply('m1', t0 + 2_000, PRO, [12_000, 8_000, 500, 200]),
      user('u2', t0 + 20 * 60_000),
      // 100000 × 0.30 + 1000 × 2.50 = 30000 + 2500 per million = $0.0325
      reply('m2', t0 + 21 * 60_000, FLASH, [100_000, 0, 1_000]),
    ])
    const ledger = computeLedger(geminiRun(repo, t0, [t0 + 10 * 60_000]), { pricing: {}, env })
    expect(ledger.rounds.map((r) => r.n)).toEqual([1, 2])
    expect(ledger.rounds[0]!.coder.usd).toBeCloseTo(0.013, 12)
    expect(Object.keys(ledger.rounds[0]!.coder.models)).toEqual([PRO])
    expect(ledger.rounds[1]!.coder.usd).toBeCloseTo(0.0325, 12)
    expect(Object.keys(ledger.rounds[1]!.coder.models)).toEqual([FLASH])
    expect(ledger.by_role.coder.usd).toBeCloseTo(0.0455, 12)
    expect(ledger.by_role.coder.tokens).toEqual({
      input: 4_000 + 100_000,
      output: 700 + 1_000,
      cache_write_5m: 0,
      cache_write_1h: 0,
      cache_read: 8_000,
    })
    expect(ledger.complete).toBe(true)
  })

  it('counts a message written three times once, as its last record', () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    sessionFile(projectFolder(env.GEMINI_CLI_HOME, repo), [
      reply('m1', t0 + 1_000, FLASH, [10, 0, 1]),
      reply('m1', t0 + 1_000, FLASH, [10, 0, 5]),
      // the last: 1000 × 0.30 + 50 × 2.50 = 300 + 125 per million = $0.000425 (the three summed: $0.000446)
      reply('m1', t0 + 1_000, FLASH, [1_000, 0, 50]),
    ])
    const ledger = computeLedger(geminiRun(repo, t0), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(0.000425, 12)
    expect(ledger.sources).toEqual([expect.objectContaining({ kind: 'gemini', session: SID, entries: 1 })])
  })

  it('counts a message rewritten after 70 later ones once, reading only what was appended', () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    const path = sessionFile(projectFolder(env.GEMINI_CLI_HOME, repo), [
      reply('first', t0 + 1_000, FLASH, [1_000, 0, 0]), // 1000 × 0.30 = $0.0003
      ...Array.from({ length: 70 }, (_, i) => reply(`m${i}`, t0 + 2_000 + i, FLASH, [100, 0, 0])), // 70 × $0.00003
    ])
    const run = geminiRun(repo, t0)
    const first = computeLedger(run, { pricing: {}, env })
    expect(first.by_role.coder.usd).toBeCloseTo(0.0003 + 0.0021, 12)
    // the first message again, grown: 2000 × 0.30 + 100 × 2.50 = 600 + 250 per million = $0.00085
    sessionFile(path.split('/chats/')[0]!, [reply('first', t0 + 1_000, FLASH, [2_000, 0, 100])], { append: true })
    const second = computeLedger(run, { pricing: {}, env })
    expect(second.by_role.coder.usd).toBeCloseTo(0.00085 + 0.0021, 12)
    const source = second.sources[0]!
    expect(source).toMatchObject({ entries: 71, status: 'read' })
    expect(source.read_bytes).toBeLessThan(source.bytes! / 10) // the cache held the rest
  })

  it("counts a resume's second file replaying the first file's messages once", () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    const folder = projectFolder(env.GEMINI_CLI_HOME, repo)
    // a: (12000 − 8000) × 1.25 + 8000 × 0.125 + 700 × 10 = $0.013; b: 100000 × 0.30 + 1000 × 2.50 = $0.0325
    const a = reply('a', t0 + 1_000, PRO, [12_000, 8_000, 500, 200])
    const b = reply('b', t0 + 5 * 60_000, FLASH, [100_000, 0, 1_000])
    sessionFile(folder, [user('u1', t0), a], { minute: '2026-12-07T10-00' })
    const second = sessionFile(folder, [user('u1', t0), a, user('u2', t0 + 4 * 60_000), b], {
      minute: '2026-12-07T10-05',
    })
    // each file alone: $0.013 and $0.0455, summed $0.0585: the replayed a twice
    const ledger = computeLedger(geminiRun(repo, t0), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(0.0455, 12)
    expect(ledger.sources.map((s) => [s.session, s.entries])).toEqual([
      [SID, 1],
      [SID, 2],
    ])
    expect(ledger.sources[1]!.path).toBe(second)
    expect(ledger.seen[SID]).toBeDefined()
  })

  it('prices a response whose prompt is over 200k at the higher rates, and the one beside it at the base rates', () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    sessionFile(projectFolder(env.GEMINI_CLI_HOME, repo), [
      // prompt 250000 > 200k: (250000 − 50000) × 2.50 + 50000 × 0.25 + 1000 × 15 = 500000 + 12500 + 15000 = $0.5275
      reply('long', t0 + 1_000, PRO, [250_000, 50_000, 1_000]),
      // prompt 150000: 150000 × 1.25 + 1000 × 10 = 187500 + 10000 = $0.1975 (the two as one 400k prompt: $1.0375)
      reply('short', t0 + 2_000, PRO, [150_000, 0, 1_000]),
    ])
    const ledger = computeLedger(geminiRun(repo, t0), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(0.5275 + 0.1975, 12)
  })
})

describe("a Gemini coder's sessions", () => {
  it('are those whose project root is the repository or a folder below it; a sibling repository’s are not', () => {
    const { root, repo, env } = homes()
    const t0 = Date.now() - HOUR
    sessionFile(projectFolder(env.GEMINI_CLI_HOME, join(repo, 'packages', 'web'), 'web'), [
      reply('m1', t0 + 1_000, FLASH, [1_000_000, 0, 0]), // $0.30
    ])
    sessionFile(
      projectFolder(env.GEMINI_CLI_HOME, join(root, 'repo-v2'), 'repo-v2'),
      [reply('m2', t0 + 1_000, FLASH, [7_000_000, 0, 0])],
      { id: OTHER },
    )
    const ledger = computeLedger(geminiRun(repo, t0), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(0.3, 12)
    expect(ledger.sources.map((s) => s.session)).toEqual([SID])
  })

  it("are the newest written since the run began for coder-done, never a reviewer's, never one that ended before", () => {
    const { repo, env } = homes()
    const t0 = Date.now() - HOUR
    const folder = projectFolder(env.GEMINI_CLI_HOME, repo)
    sessionFile(folder, [reply('m1', t0 + 1_000, FLASH, [1, 0, 0])])
    const reviewer = sessionFile(folder, [reply('m2', t0 + 2_000, FLASH, [1, 0, 0])], { id: OTHER })
    const later = new Date(Date.now() + 5_000)
    utimesSync(reviewer, later, later) // the reviewer's file is the newest
    const round = { ...coderRound(1, null, at(t0 + 3_000)), reviewer: { session_id: OTHER } }
    const run = geminiRun(repo, t0, [], { rounds: [round as RunState['rounds'][number]] })
    expect(currentCoderSession(geminiRun(repo, t0), env)).toBe(OTHER)
    expect(currentCoderSession(run, env)).toBe(SID)
    expect(currentCoderSession(geminiRun(repo, Date.now() + 60_000), env)).toBeNull()
  })
})

describe('pair-loop start --coder gemini, coder-done and budget-check', () => {
  const saved = CODER_READERS.gemini
  afterEach(() => {
    ;(CODER_READERS as Record<string, unknown>).gemini = saved
  })

  /** A sandbox whose person config names the Gemini home (no test reads the real ~/.gemini). */
  function geminiSandbox() {
    const sb = sandbox()
    const geminiHome = join(sb.env.HOME, 'gemini')
    writeTestHomeConfig(sb.home, { pair_loop: { gemini_cli_home: geminiHome } })
    return { sb, env: { GEMINI_CLI_HOME: geminiHome }, geminiHome }
  }

  it('was refused while no reader counted a Gemini coder (the positive control: its spend went uncounted)', async () => {
    const { sb, env } = geminiSandbox()
    ;(CODER_READERS as Record<string, unknown>).gemini = null // main before this reader: `gemini: null`
    const refused = expectError(await sb.cli(['start', '--task', 'demo', '--coder', 'gemini'], { env }), 'usage')
    expect(refused).toMatchObject({ flag: '--coder', coder: 'gemini' })
    expect(refused.message).toContain("cannot count a gemini coder's spend")
    ;(CODER_READERS as Record<string, unknown>).gemini = saved
    const started = await sb.cli(['start', '--task', 'demo', '--coder', 'gemini'], { env })
    expect(started.code, started.stderr).toBe(0)
    expect(started.json).toMatchObject({ coder: 'gemini' })
  })

  it("lists the coder's session files in budget-check's sources and counts them, after coder-done found the session", async () => {
    const { sb, env, geminiHome } = geminiSandbox()
    const start = await sb.cli(['start', '--task', 'demo', '--coder', 'gemini', '--budget-usd', '5'], { env })
    expect(start.code, start.stderr).toBe(0)
    const folder = projectFolder(geminiHome, realpathSync(sb.repo))
    const now = Date.now()
    const path = sessionFile(folder, [
      user('u1', now),
      // (12000 − 8000) × 1.25 + 8000 × 0.125 + (500 + 200) × 10 = $0.013
      reply('m1', now + 1, PRO, [12_000, 8_000, 500, 200]),
      // 100000 × 0.30 + 1000 × 2.50 = $0.0325
      reply('m2', now + 2, FLASH, [100_000, 0, 1_000]),
    ])
    writeFileSync(join(sb.repo, 'change.txt'), 'a change\n')
    const done = await sb.cli(['coder-done', '--summary', 'did it'], { env })
    expect(done.code, done.stderr).toBe(0)
    expect(done.json.session_id).toBe(SID)

    const check = await sb.cli(['budget-check'], { env })
    expect(check.code, check.stderr).toBe(0)
    expect(check.json.sources).toEqual([
      expect.objectContaining({ role: 'coder', kind: 'gemini', session: SID, path, status: 'read', entries: 2 }),
    ])
    expect(check.json.by_role.coder.usd).toBeCloseTo(0.0455, 12)
    expect(check.json.spent).toBeCloseTo(0.0455, 12)
  })
})
