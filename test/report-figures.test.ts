// The figures across runs that were not true (issue 21, 6 and 7; issue 20, 11): a run with no coder record is never
// "measured", an approval later abandoned is no approval, and a run reviewed by the coder's own vendor is counted apart.
import { describe, expect, it } from 'vitest'
import { renderPrBody } from '../lib/pr/body.ts'
import { renderAllRunsReport } from '../lib/report/all-runs-report.ts'
import { runFigures, summarise, usdPerMergedPr } from '../lib/report/figures.ts'
import { renderRunReport } from '../lib/report/run-report.ts'
import type { RunCost } from '../lib/report/run-cost.ts'
import type { RunState } from '../lib/run/state.ts'
import { assessment, mergedPr, NOW, twoRoundRun } from './_report.ts'

const figure = (page: string, key: string) =>
  new RegExp(`data-figure="${key}"><dt>[^<]*</dt><dd>([^<]*)<small>([^<]*)</small>`).exec(page)?.slice(1) ?? []

/** An assessment in which the coder's transcripts held no response in the run's window (read, but none of its own). */
function withoutCoder(reviewerUsd: number): RunCost {
  const cost = assessment(
    [
      [0, reviewerUsd / 2],
      [0, reviewerUsd / 2],
    ],
    5,
  )
  cost.budget!.ledger.sources = [
    { role: 'coder', kind: 'claude', session: 'unrelated', path: '/x/unrelated.jsonl', status: 'read' },
  ]
  return cost
}

describe('a figure that was not measured', () => {
  it('is never summed into "every run measured": the spend reads "at least" and names the runs not measured', () => {
    const page = renderAllRunsReport([{ run: twoRoundRun(), cost: withoutCoder(0.144) }], NOW)
    expect(figure(page, 'spent')).toEqual(['at least $0.1440', '1 run not fully measured'])
    expect(page).not.toContain('every run measured')
  })

  it('says "every run measured" when every run is', () => {
    const page = renderAllRunsReport([{ run: twoRoundRun(), cost: assessment([[0.1, 0.044]], 5) }], NOW)
    expect(figure(page, 'spent')).toEqual(['$0.1440', 'every run measured'])
  })

  it('shows the coder as not measured in every round of the run page, never as $0.0000, with a note why', () => {
    const page = renderRunReport(twoRoundRun(), withoutCoder(0.144), NOW)
    const coderCells = [...page.matchAll(/<td class="num unmeasured"[^>]* data-cost="coder"[^>]*>([^<]*)<\/td>/g)]
    expect(coderCells.map((m) => m[1])).toEqual(['not measured', 'not measured'])
    expect(page).not.toMatch(/data-cost="coder"[^>]*>\$0\.0000/)
    expect(page).toMatch(/data-cost="coder-total"[^>]*data-measured="no">not measured</)
    expect(page).toMatch(/data-cost="total"[^>]*>at least \$0\.1440</)
    expect(page).toContain('<li>coder: not measured (no coder response in any transcript found for this run)</li>')
    expect(page).toMatch(/<dd><span data-cost="spent" data-usd="0.144">at least \$0\.1440 \(coder not measured\)/)
  })
})

describe('the PR body', () => {
  it('marks the rounds and the total it could not measure, never a measured $0', () => {
    const unmeasured = {
      roles: [{ role: 'coder' as const, how: 'none' as const, why: 'no transcript' }],
      rounds: [1, 2].map((n) => ({ n, role: 'coder' as const, why: 'no coder response in its window' })),
    }
    const body = renderPrBody(twoRoundRun(), { total_usd: 0.144, by_round: { 1: 0.072, 2: 0.072 }, unmeasured })
    expect(body).toContain('| 1 | CHANGES_REQUESTED | 1 | 1 | at least $0.0720 |')
    expect(body).toContain('**Total cost:** at least $0.1440 (coder not measured)')
    const measured = renderPrBody(twoRoundRun(), {
      total_usd: 0.144,
      by_round: { 1: 0.072, 2: 0.072 },
      unmeasured: { roles: [], rounds: [] },
    })
    expect(measured).toContain('**Total cost:** $0.1440')
  })
})

describe('an approval', () => {
  /** Approved in round 1, then the person abandoned the run. */
  const abandoned = (): RunState =>
    twoRoundRun({
      run_id: '20261130-000009-aaaaaa',
      outcome: { verdict: 'ABANDONED', finished_at: '2026-11-30T05:30:00.000Z' },
    })

  it('later abandoned is no approval: no rounds to approval, and it counts against the approval rate', () => {
    const f = runFigures(abandoned(), { spent: 1, measured: true })
    expect(f).toMatchObject({ ended: true, approved: false, rounds_to_approval: null })
    const approved = runFigures(twoRoundRun(), { spent: 1, measured: true })
    expect(summarise([f, approved])).toMatchObject({ ended: 2, approved: 1, approval_rate: 0.5, usd_per_approved: 2 })
  })

  it('marks the dollars per approved run "at least" when an ended run it divides was not fully measured', () => {
    const f = runFigures(abandoned(), { spent: 1, measured: false })
    const approved = runFigures(twoRoundRun(), { spent: 1, measured: true })
    expect(summarise([f, approved])).toMatchObject({ usd_per_approved: 2, ended_unmeasured: 1 })
    const page = renderAllRunsReport(
      [
        { run: abandoned(), cost: assessment([[0, 0.1]], 1) }, // its coder wrote no transcript: not measured
        { run: twoRoundRun(), cost: assessment([[0.1, 0.1]], 1) },
      ],
      NOW,
    )
    expect(figure(page, 'usd-per-approved')[0]).toMatch(/^at least \$/)
  })

  it('shows "—" to approval for the abandoned run in the table of every run', () => {
    const page = renderAllRunsReport([{ run: abandoned(), cost: assessment([[0.1, 0]], 1) }], NOW)
    expect(page).toMatch(/<td data-label="Outcome">Abandoned<\/td>[\s\S]*?<td data-label="To approval" class="num">—</)
    expect(figure(page, 'approval-rate')[0]).toBe('0%')
  })
})

describe('runs reviewed by the coder’s own vendor', () => {
  const fallback = (): RunState => {
    const run = twoRoundRun({ run_id: '20261130-000008-ffffff', reviewer_fallback: true })
    for (const round of run.rounds) round.reviewer = { ...round.reviewer!, tool: 'claude', fallback_used: true }
    return run
  }

  it('are counted apart: in what was spent, never in the approval rate or dollars per approval', () => {
    const cross = runFigures(twoRoundRun(), { spent: 1, measured: true })
    const same = runFigures(fallback(), { spent: 3, measured: true })
    expect(same.cross_vendor).toBe(false)
    expect(summarise([cross, same])).toMatchObject({
      runs: 2,
      ended: 1,
      approved: 1,
      approval_rate: 1,
      usd_per_approved: 1,
      spent: 4,
      same_vendor: { runs: 1, ended: 1, approved: 1, spent: 3 },
    })
  })

  it('are named apart on the page of every run', () => {
    const page = renderAllRunsReport([{ run: fallback(), cost: assessment([[0.1, 0.1]], 1) }], NOW)
    expect(figure(page, 'same-vendor')[0]).toBe('1')
    expect(page).toContain('Approved <span class="muted">(same vendor)</span>')
  })
})

describe('dollars per merged PR', () => {
  it("is one definition: the ended cross-vendor runs' spend, merged or not, over the PRs merged among them", () => {
    const merged = mergedPr(twoRoundRun({ run_id: '20261130-000001-aaaaaa' }), '2026-12-01T00:00:00.000Z')
    const unmerged = twoRoundRun({ run_id: '20261130-000002-bbbbbb' })
    const open = twoRoundRun({ run_id: '20261130-000003-cccccc', phase: 'coding', outcome: null })
    const figures = [
      runFigures(merged, { spent: 1, measured: true }),
      runFigures(unmerged, { spent: 1, measured: true }),
      runFigures(open, { spent: 5, measured: true }),
    ]
    // by hand: ($1 + $1) over one merged PR; the open run's $5 is not yet part of any outcome
    expect(usdPerMergedPr(figures)).toBe(2)
    expect(summarise(figures).usd_per_merged).toBe(2)
    expect(usdPerMergedPr(figures.slice(1))).toBeNull()
  })
})
