// Merged, once and for all (issue 20, 10): a PR merged after the last pr-check is learnt by status and report with one
// gh look-up, recorded on the run, and both say the same dollars per merged PR.
import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeProjectFolder } from '../lib/agents/locate.ts'
import { expectOk } from './_expect.ts'
import { at, operationOf, prSandbox } from './_pr.ts'
import { claudeAssistant, writeLines } from './cost/_gen.ts'

type Sb = Awaited<ReturnType<typeof prSandbox>>

const metaCalls = (sb: Sb) => sb.calls().filter((call) => operationOf(call) === 'PrMeta').length

/** The PR ticked once while open, then merged on GitHub with nobody ticking again (the skill stopped at success). */
async function mergedAfterTheLastTick(): Promise<Sb> {
  const sb = await prSandbox()
  expectOk(await sb.cli(['pr-check']))
  sb.change((w) => {
    w.pr.state = 'MERGED'
    w.pr.merged_at = at(90)
  })
  return sb
}

/** The coder (Claude Code, haiku at $1 per million input tokens) spends `dollars` in the repository's folder, now. */
function spend(sb: Sb, sid: string, dollars: number): void {
  const folder = claudeProjectFolder(realpathSync(sb.repo))
  const now = Date.now()
  const line = claudeAssistant({
    sessionId: sid,
    ts: new Date(now).toISOString(),
    id: `msg_${sid}_${now}`,
    requestId: `req_${sid}_${now}`,
    model: 'claude-haiku-4-5-20251001',
    usage: { input: Math.round(dollars * 1_000_000), output: 0, w5m: 0, w1h: 0, read: 0 },
  })
  writeLines(join((sb.env as NodeJS.ProcessEnv).CLAUDE_CONFIG_DIR!, 'projects', folder, `${sid}.jsonl`), [line], {
    append: true,
  })
}

describe('a PR merged after the last tick', () => {
  it('is learnt by status --all with one gh look-up, recorded on the run, and counted as merged', async () => {
    const sb = await mergedAfterTheLastTick()
    const before = metaCalls(sb)
    const all = expectOk(await sb.cli(['status', '--all']))
    expect(all.runs[0]).toMatchObject({ run_id: sb.runId, merged_at: at(90) })
    expect(all.merged_prs).toMatchObject({ count: 1, counted: 1 })
    expect(sb.state(sb.runId).pr_watch!.merged_at).toBe(at(90))
    expect(metaCalls(sb)).toBe(before + 1)
    expectOk(await sb.cli(['status', '--all']))
    expectOk(await sb.cli(['status']))
    expect(metaCalls(sb)).toBe(before + 1) // recorded: never asked again
  })

  it('is learnt by status of the run too', async () => {
    const sb = await mergedAfterTheLastTick()
    expectOk(await sb.cli(['status']))
    expect(sb.state(sb.runId).pr_watch!.merged_at).toBe(at(90))
  })

  it('is learnt by report --all, which says the same dollars per merged PR as status --all', async () => {
    const sb = await mergedAfterTheLastTick()
    // a second run of the same repository, ended without a PR, spends $0.50: part of what the merged PR cost
    const second = expectOk(await sb.cli(['start', '--task', 'second try'])).run_id
    spend(sb, 'cccccccc-0000-4000-8000-000000000003', 0.5)
    expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED', '--run', second]))
    const report = expectOk(await sb.cli(['report', '--all']))
    expect(sb.state(sb.runId).pr_watch!.merged_at).toBe(at(90))
    const page = readFileSync(report.path, 'utf8')
    const perMerged = /data-figure="usd-per-merged"><dt>[^<]*<\/dt><dd>([^<]*)</.exec(page)?.[1]
    const all = expectOk(await sb.cli(['status', '--all']))
    // by hand: $0 (the merged run) + $0.50 (the abandoned one) over one merged PR; the merged run's $0 is no
    // measurement (no coder transcript), so both say the figure is at least that
    expect(all.merged_prs.usd_per_merged_pr).toBeCloseTo(0.5, 9)
    expect(all.merged_prs.measured).toBe(false)
    expect(perMerged).toBe('at least $0.5000')
  })

  it('is asked about once while GitHub says it is still open, then not again for a while', async () => {
    const sb = await prSandbox()
    expectOk(await sb.cli(['pr-check']))
    const before = metaCalls(sb)
    expectOk(await sb.cli(['status']))
    expectOk(await sb.cli(['status', '--all']))
    expect(metaCalls(sb)).toBe(before + 1)
    expect(sb.state(sb.runId).pr_watch!.merged_at).toBeNull()
  })
})
