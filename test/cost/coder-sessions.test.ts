// Which sessions are the coder's (issue 17, items 15 and 16): every session with lines in the run's window, in the
// transcript folders of the repository's top level and of any folder below it, less the run's reviewer sessions.
// Expected figures are worked out by hand from the price table (transcripts-and-pricing.md §5).
import { mkdirSync, realpathSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { currentCoderSession } from '../../lib/cost/coder.ts'
import { computeLedger } from '../../lib/cost/ledger.ts'
import { claudeProjectDir, claudeProjectFolder } from '../../lib/agents/locate.ts'
import type { RunState } from '../../lib/run/state.ts'
import { sandbox, tempDir } from '../_helpers.ts'
import { codexMeta, codexTokenCount, codexTurn, coderRound, makeRun, rolloutPath, writeLines } from './_gen.ts'
import { claudeFolder, HAIKU, handOver, OPUS_41, writeSession } from './_spend.ts'

const BIG = 'c0000000-0000-4000-8000-000000000001'
const HI = 'c0000000-0000-4000-8000-000000000002'
const REVIEWER = 'c0000000-0000-4000-8000-000000000003'
const iso = (h: number) => `2026-01-05T${String(h).padStart(2, '0')}:00:00.000Z`

function homes() {
  const root = tempDir('pl-sessions-')
  const repo = join(root, 'repo')
  mkdirSync(join(repo, 'packages', 'web'), { recursive: true })
  const env = {
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    PAIR_LOOP_HOME: join(root, 'pl'),
    HOME: root,
  }
  return { root, repo: realpathSync(repo), env }
}

describe("the coder's cost is every coder session in the run's window", () => {
  it('a $75 session still counts when a cheap `claude -p hi` ran after it: coder-done refuses on a $5 limit', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'demo', '--budget-usd', '5'])).code).toBe(0)
    writeSession(claudeFolder(sb), BIG, [{ model: OPUS_41, output: 1_000_000 }]) // $75
    const hi = writeSession(claudeFolder(sb), HI, [{ model: HAIKU, input: 10 }]) // $0.00001, the newest
    const later = new Date(Date.now() + 5_000)
    utimesSync(hi, later, later)

    const refused = await handOver(sb)
    expect(refused.code, refused.stderr).toBe(13)
    expect(refused.json.errors[0]).toMatchObject({ code: 'budget_exceeded', limit_usd: 5 })
    expect(refused.json.errors[0].spent_usd).toBeCloseTo(75.00001, 9)
  })

  it("counts every session with lines in the window, and none of the run's reviewer sessions", () => {
    const { repo, env } = homes()
    const dir = claudeProjectDir(repo, env)
    writeLines(join(dir, `${BIG}.jsonl`), [claudeLine(BIG, repo, { model: OPUS_41, output: 1_000_000 })]) // $75
    writeLines(join(dir, `${HI}.jsonl`), [claudeLine(HI, repo, { model: HAIKU, input: 10 })]) // $0.00001
    writeLines(join(dir, `${REVIEWER}.jsonl`), [claudeLine(REVIEWER, repo, { model: HAIKU, input: 2_000_000 })]) // $2
    const run = makeRun({
      repo,
      created_at: iso(1),
      phase: 'coding',
      rounds: [
        {
          ...coderRound(1, HI, iso(3)),
          reviewer: reviewerRecord(REVIEWER),
        },
      ],
    })
    const ledger = computeLedger(run, { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(75.00001, 9)
    expect(ledger.sources.filter((s) => s.role === 'coder').map((s) => s.session)).toEqual([HI, BIG])
  })
})

describe("the repository's transcript folders include those of the folders below its top level", () => {
  it('Claude Code started in packages/web counts; a sibling repository whose folder name starts alike does not', () => {
    const { root, repo, env } = homes()
    const projects = join(env.CLAUDE_CONFIG_DIR, 'projects')
    const web = join(repo, 'packages', 'web')
    writeLines(join(projects, claudeProjectFolder(web), `${BIG}.jsonl`), [
      claudeLine(BIG, web, { model: HAIKU, input: 3_000_000 }), // $3
    ])
    const sibling = join(root, 'repo-v2') // its folder is the top level's name + '-v2'
    expect(claudeProjectFolder(sibling).startsWith(`${claudeProjectFolder(repo)}-`)).toBe(true)
    writeLines(join(projects, claudeProjectFolder(sibling), `${HI}.jsonl`), [
      claudeLine(HI, sibling, { model: HAIKU, input: 7_000_000 }),
    ])

    const ledger = computeLedger(makeRun({ repo, created_at: iso(1) }), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(3, 12)
    expect(ledger.sources.map((s) => [s.session, s.status])).toEqual([[BIG, 'read']])
  })

  it('a Codex rollout whose cwd is below the top level counts; one in a sibling repository does not', () => {
    const { root, repo, env } = homes()
    const inWeb = '01a2b3c4-0000-7000-8000-0000000000a1'
    const inSibling = '01a2b3c4-0000-7000-8000-0000000000a2'
    const usage = { input: 1_000_000, cached: 0, output: 0, reasoning: 0 } // gpt-5: $1.25
    for (const [thread, cwd] of [
      [inWeb, join(repo, 'packages', 'web')],
      [inSibling, join(root, 'repo-v2')],
    ] as const)
      writeLines(rolloutPath(env.CODEX_HOME, thread), [
        codexMeta(thread, iso(2), { cwd }),
        codexTurn('gpt-5', iso(2)),
        codexTokenCount(iso(2), usage, usage),
      ])
    const ledger = computeLedger(makeRun({ repo, coder: 'codex', created_at: iso(1) }), { pricing: {}, env })
    expect(ledger.by_role.coder.usd).toBeCloseTo(1.25, 12)
    expect(ledger.sources.map((s) => s.session)).toEqual([inWeb])
  })
})

describe("the session coder-done records as the coder's", () => {
  it('is never one that ended before the run began', () => {
    const { repo, env } = homes()
    writeLines(join(claudeProjectDir(repo, env), `${BIG}.jsonl`), [claudeLine(BIG, repo, { model: HAIKU, input: 1 })])
    // the transcript was last written now: a run that begins a minute from now cannot count it as its coder's
    const later = new Date(Date.now() + 60_000).toISOString()
    expect(currentCoderSession(makeRun({ repo, created_at: later }), env)).toBeNull()
  })

  it("is the newest transcript written since the run began, a reviewer's excepted", () => {
    const { repo, env } = homes()
    const dir = claudeProjectDir(repo, env)
    writeLines(join(dir, `${BIG}.jsonl`), [claudeLine(BIG, repo, { model: HAIKU, input: 1 })])
    const reviewer = join(dir, `${REVIEWER}.jsonl`)
    writeLines(reviewer, [claudeLine(REVIEWER, repo, { model: HAIKU, input: 1 })])
    const later = new Date(Date.now() + 5_000)
    utimesSync(reviewer, later, later) // the reviewer's transcript is the newest one
    const round = { ...coderRound(1, null, iso(3)), reviewer: reviewerRecord(REVIEWER) }
    expect(currentCoderSession(makeRun({ repo, created_at: iso(1), rounds: [round] }), env)).toBe(BIG)
  })
})

/** One response, as Claude Code writes it in `cwd`. */
function claudeLine(sid: string, cwd: string, spend: { model: string; input?: number; output?: number }) {
  return {
    type: 'assistant',
    isSidechain: false,
    requestId: `req_${sid}`,
    message: {
      id: `msg_${sid}`,
      model: spend.model,
      usage: { input_tokens: spend.input ?? 0, output_tokens: spend.output ?? 0 },
    },
    timestamp: iso(2),
    cwd,
    sessionId: sid,
  }
}

/** A reviewer's round record that ran under `sessionId`. */
function reviewerRecord(sessionId: string): NonNullable<RunState['rounds'][number]['reviewer']> {
  return {
    tool: 'claude',
    fallback_used: false,
    verdict: 'CHANGES_REQUESTED',
    findings: [],
    summary: '',
    session_id: sessionId,
    model: HAIKU,
    usage: null,
    cost: null,
    calls: 1,
    duration_ms: 1,
    raw_output_path: null,
    over_budget: false,
    at: iso(3),
  }
}
