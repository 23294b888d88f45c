// Three real loops with the stub reviewers for the report's browser tests, in one repository and home: A approved in
// round 2 (the coder spending $0.25 then $0.15), B capped after its findings came back (its page also taken while it
// waits for the person), C abandoned with hostile text everywhere. Made as the tests first need them.
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { claudeProjectFolder } from '../lib/agents/locate.ts'
import { expectOk, type Sandbox, writeChange } from './_expect.ts'
import { sandbox, tempDir } from './_helpers.ts'
import { reviewArgs } from './_review.ts'
import { claudeAssistant, writeLines } from './cost/_gen.ts'

/** The coder (Claude Code, haiku at $1 per million input tokens) spends these dollars in session `sid`, now. */
function spend(sb: Sandbox, sid: string, dollars: number[]): void {
  const folder = claudeProjectFolder(realpathSync(sb.repo))
  const path = join((sb.env as NodeJS.ProcessEnv).CLAUDE_CONFIG_DIR!, 'projects', folder, `${sid}.jsonl`)
  const now = Date.now()
  const lines = dollars.map((d, i) =>
    claudeAssistant({
      sessionId: sid,
      ts: new Date(now + i).toISOString(),
      id: `msg_${sid}_${now}_${i}`,
      requestId: `req_${sid}_${now}_${i}`,
      model: 'claude-haiku-4-5-20251001',
      usage: { input: Math.round(d * 1_000_000), output: 0, w5m: 0, w1h: 0, read: 0 },
    }),
  )
  writeLines(path, lines, { append: true })
}

const reply = (sb: Sandbox, finding: string, disposition: string, body: string) =>
  sb.cli(['reply', '--finding', finding, '--disposition', disposition, '--body-file', '-'], { input: body })

/** budget-check's document: the independent figure the report's totals must equal (taken before `finish`). */
const budgetCheck = async (sb: Sandbox) => expectOk(await sb.cli(['budget-check']))

// what changes.sh says (fixtures/reviewers/_common.sh), copied by hand
export const STUB_FINDINGS = [
  { id: '1.1', place: 'src/a.ts:3-5', text: 'the loop bound is off by one: the last element is never visited' },
  { id: '1.2', place: 'src/a.test.ts:1', text: 'no test covers an empty input' },
]
export const REPLIES = [
  { finding: '1.1', disposition: 'fixed', body: 'The loop now runs to values.length.' },
  { finding: '1.2', disposition: 'fixed', body: 'Added a test for [].' },
]
export const TASK = 'Fix the off-by-one in sum()'
export const HOSTILE_TASK = `Escape <script>window.__pwned = 'task'</script> titles <img src=x onerror="window.__pwned='img'">`
const HOSTILE_FINDING = `1. [security/blocker] src/x.ts:1 — <script>window.__pwned = 'finding'</script><b>bold?</b> & "quotes"`

export interface Loop {
  sb: Sandbox
  runId: string
  /** budget-check's JSON document, read field by field. */
  budget: any
  /** B only: its page while it waited for the person (the round cap reached). */
  waitingPage?: string
}

/** Run A: changes requested (two findings, both answered), then approved; the coder spends $0.25, then $0.15. */
async function twoRoundLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', TASK, '--budget-usd', '1']))
  spend(sb, 'aaaaaaaa-0000-4000-8000-000000000001', [0.15, 0.1])
  writeChange(sb, 'src.ts', 'export const sum = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Loop bound fixed in sum().']))
  expect(expectOk(await sb.cli(reviewArgs('changes'))).verdict).toBe('CHANGES_REQUESTED')
  for (const r of REPLIES) expectOk(await reply(sb, r.finding, r.disposition, r.body))
  spend(sb, 'aaaaaaaa-0000-4000-8000-000000000001', [0.15])
  writeChange(sb, 'src.ts', 'export const sum = 2\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Test for the empty list added.']))
  expect(expectOk(await sb.cli(reviewArgs('approve'))).verdict).toBe('APPROVED')
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
  return { sb, runId, budget }
}

/** Run B: capped at two rounds, the same two findings back after their replies (recurring), closed unapproved. */
async function cappedLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', 'Speed up the parser', '--max-rounds', '2']))
  spend(sb, 'bbbbbbbb-0000-4000-8000-000000000002', [0.05])
  writeChange(sb, 'src.ts', 'export const parse = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Parser rewritten.']))
  expectOk(await sb.cli(reviewArgs('changes')))
  for (const r of REPLIES) expectOk(await reply(sb, r.finding, r.disposition, r.body))
  writeChange(sb, 'src.ts', 'export const parse = 2\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Second try.']))
  expect(expectOk(await sb.cli(reviewArgs('changes'))).next).toBe('ask-user')
  // outside PAIR_LOOP_HOME: an output flag never writes pair-loop's own folder (issue 33)
  const waitingPage = join(tempDir('pl-report-out-'), 'waiting.html')
  expectOk(await sb.cli(['report', '--out', waitingPage]))
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED']))
  return { sb, runId, budget, waitingPage }
}

/** Run C: hostile agent text everywhere (task, finding, reply), abandoned after one round. */
async function hostileLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', HOSTILE_TASK]))
  writeChange(sb, 'src.ts', 'export const x = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', '<iframe src="x"></iframe>']))
  expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: HOSTILE_FINDING } }))
  expectOk(await reply(sb, '1.1', 'wont-fix', '</div><script>window.__pwned = "reply"</script>'))
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
  return { sb, runId, budget }
}

// one repository and home for the three runs
export const shared = sandbox()
let loopA: Promise<Loop> | undefined
let loopsBC: Promise<[Loop, Loop]> | undefined
export const runA = () => (loopA ??= twoRoundLoop(shared))
export const runsBC = () => (loopsBC ??= runA().then(async () => [await cappedLoop(shared), await hostileLoop(shared)]))
