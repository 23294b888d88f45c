// The environment that locates transcripts is frozen on the run at `start` (issue 17, item 17): a later command run
// with HOME, CLAUDE_CONFIG_DIR or CODEX_HOME pointed at an empty folder still counts what the coder spent, and says
// once on stderr that it uses the start's. Haiku 4.5 input is $1 a million tokens (transcripts-and-pricing.md §5).
import { mkdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { computeLedger } from '../../lib/cost/ledger.ts'
import { sandbox, tempDir } from '../_helpers.ts'
import { codexMeta, codexTokenCount, codexTurn, makeRun, rolloutPath, writeLines } from './_gen.ts'
import { claudeFolder, HAIKU, handOver, writeSession } from './_spend.ts'

const SID = 'e0000000-0000-4000-8000-000000000001'
const NOTE = /looks for transcripts where it started/g

describe('the environment that locates transcripts is frozen at start', () => {
  it('start records HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME and XDG_CONFIG_HOME as they were', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo'])
    expect(sb.state(start.json.run_id).transcript_env).toEqual({
      HOME: sb.env.HOME,
      CLAUDE_CONFIG_DIR: sb.env.CLAUDE_CONFIG_DIR,
      CODEX_HOME: sb.env.CODEX_HOME,
      GEMINI_CLI_HOME: null,
      XDG_CONFIG_HOME: null,
    })
  })

  it('CLAUDE_CONFIG_DIR pointed at an empty folder: coder-done and budget-check still count the session, and say so once', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])).code).toBe(0)
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 6_000_000 }]) // $6
    const elsewhere = { CLAUDE_CONFIG_DIR: tempDir('pl-empty-claude-') }

    const refused = await handOver(sb, [], elsewhere)
    expect(refused.code, refused.stderr).toBe(13)
    expect(refused.json.errors[0].spent_usd).toBeCloseTo(6, 12)
    expect(refused.stderr.match(NOTE)).toHaveLength(1)
    expect(refused.stderr).toContain(`CLAUDE_CONFIG_DIR is ${elsewhere.CLAUDE_CONFIG_DIR} here`)

    const check = await sb.cli(['budget-check'], { env: elsewhere })
    expect(check.code).toBe(13)
    expect(check.json.spent).toBeCloseTo(6, 12)
    expect(check.json.sources).toEqual([expect.objectContaining({ session: SID, status: 'read' })])
  })

  it("start run with CLAUDE_CONFIG_DIR at an empty folder does not hide the person's transcripts: both folders are counted, and sources say so (issue 33)", async () => {
    // on 42ee5a2 the start's empty folder was frozen as the only place to read: spent 0, level none
    const sb = sandbox() // the test person's config names claude_config_dir: <home>/.claude
    const empty = tempDir('pl-empty-claude-')
    const start = await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'], { env: { CLAUDE_CONFIG_DIR: empty } })
    expect(start.code, start.stderr).toBe(0)
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 6_000_000 }]) // $6 in the person's folder
    const other = 'e0000000-0000-4000-8000-000000000002'
    writeSession(claudeFolder(sb, '', empty), other, [{ model: HAIKU, input: 1_000_000 }]) // $1 where start pointed
    const check = await sb.cli(['budget-check'])
    expect(check.code, check.stderr).toBe(13)
    expect(check.json.spent).toBeCloseTo(7, 12)
    expect(check.json.sources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ session: null, path: empty, location: 'start' }),
        expect.objectContaining({ session: other, status: 'read', location: 'start' }),
        expect.objectContaining({ session: SID, status: 'read' }),
      ]),
    )
    expect(check.json.sources.find((s: { session: string }) => s.session === SID).location).toBeUndefined()
  })

  it('the session coder-done records is found where the run started, with the note said once', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '100'])).code).toBe(0)
    writeSession(claudeFolder(sb), SID, [{ model: HAIKU, input: 10 }])
    const done = await handOver(sb, [], { CLAUDE_CONFIG_DIR: tempDir('pl-empty-claude-') })
    expect(done.code, done.stderr).toBe(0)
    expect(done.json.session_id).toBe(SID)
    expect(done.stderr.match(NOTE)).toHaveLength(1)
  })

  it('HOME moved (no CLAUDE_CONFIG_DIR): ~/.claude of the start is where the spend is read', async () => {
    const sb = sandbox()
    const noConfigDir = { CLAUDE_CONFIG_DIR: '' }
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'], { env: noConfigDir })).code).toBe(0)
    writeSession(claudeFolder(sb, '', join(sb.env.HOME, '.claude')), SID, [{ model: HAIKU, input: 6_000_000 }])
    const check = await sb.cli(['budget-check'], { env: { ...noConfigDir, HOME: tempDir('pl-empty-home-') } })
    expect(check.code, check.stderr).toBe(13)
    expect(check.json.spent).toBeCloseTo(6, 12)
    expect(check.stderr).toMatch(/HOME is .* here, .* at start/)
  })

  it('CODEX_HOME pointed at an empty folder: a Codex coder’s rollout is still read', async () => {
    const sb = sandbox()
    expect(
      (await sb.cli(['start', '--task', 'demo', '--coder', 'codex', '--reviewer', 'claude', '--budget-usd', '5'])).code,
    ).toBe(0)
    const thread = '01a2b3c4-0000-7000-8000-0000000000e1'
    const now = new Date().toISOString()
    const usage = { input: 4_000_000, cached: 0, output: 0, reasoning: 0 } // gpt-5: 4M × $1.25 = $5
    writeLines(rolloutPath(sb.env.CODEX_HOME!, thread), [
      codexMeta(thread, now, { cwd: realpathSync(sb.repo) }),
      codexTurn('gpt-5', now),
      codexTokenCount(now, usage, usage),
    ])
    const check = await sb.cli(['budget-check'], { env: { CODEX_HOME: tempDir('pl-empty-codex-') } })
    expect(check.code, check.stderr).toBe(13)
    expect(check.json.spent).toBeCloseTo(5, 12)
  })

  it('a run started before the environment was frozen loads, and reads where the current environment says', () => {
    const root = tempDir('pl-old-run-')
    const repo = join(root, 'repo')
    mkdirSync(repo)
    const env = { CLAUDE_CONFIG_DIR: join(root, 'claude'), PAIR_LOOP_HOME: join(root, 'pl'), HOME: root }
    const run = makeRun({ repo, created_at: '2026-01-05T01:00:00.000Z' })
    expect(run.transcript_env ?? null).toBeNull()
    const folder = join(env.CLAUDE_CONFIG_DIR, 'projects', realpathSync(repo).replace(/[^A-Za-z0-9]/g, '-'))
    writeLines(join(folder, `${SID}.jsonl`), [
      {
        type: 'assistant',
        requestId: 'req_old',
        message: { id: 'msg_old', model: HAIKU, usage: { input_tokens: 2_000_000, output_tokens: 0 } },
        timestamp: '2026-01-05T02:00:00.000Z',
        sessionId: SID,
      },
    ])
    expect(computeLedger(run, { pricing: {}, env }).by_role.coder.usd).toBeCloseTo(2, 12)
  })
})
