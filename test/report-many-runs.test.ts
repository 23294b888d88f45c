import { describe, expect, it } from 'vitest'
import { type ReportEntry, renderAllRunsReport } from '../lib/report/all-runs-report.ts'
import { runState } from './_state.ts'

// `report --all` with a long history: one page a browser opens at once, its totals over every run.

const RUNS = 10_001
const NOW = new Date('2027-06-01T00:00:00.000Z')

/** `RUNS` runs an hour apart from 2026-01-01 (so over 14 months), every third one still open, none measured. */
function history(): ReportEntry[] {
  return Array.from({ length: RUNS }, (_, i) => {
    const at = new Date(Date.UTC(2026, 0, 1) + i * 3_600_000)
    const run_id = `${at.toISOString().slice(0, 10).replace(/-/g, '')}-${at.toISOString().slice(11, 19).replace(/:/g, '')}-${i.toString(16).padStart(6, '0')}`
    const run = runState({ run_id, created_at: at.toISOString(), phase: i % 3 === 0 ? 'coding' : 'finished' })
    return { run, cost: { error: 'not measured here' } }
  })
}

const rowsOf = (page: string, attribute: string) =>
  [...page.matchAll(new RegExp(`<tr ${attribute}="([^"]+)">`, 'g'))].map((m) => m[1]!)

describe('the report of every run, with 10,001 runs', () => {
  const page = renderAllRunsReport(history(), NOW)

  it('lists the 200 newest runs one by one, newest first', () => {
    const listed = rowsOf(page, 'data-run')
    expect(listed).toHaveLength(200)
    expect(listed[0]).toBe('20270221-160000-002710')
    expect(page).toContain('<caption>The 200 newest of 10001 runs; each links to its page</caption>')
  })

  it('counts every run in the summary', () => {
    expect(page).toMatch(/data-figure="runs"><dt>Runs<\/dt><dd>10001<small>6667 ended, 3334 still open<\/small>/)
  })

  it('adds up every run by month, the older ones included', () => {
    const months = [
      ...page.matchAll(/<tr data-month="([^"]+)"><th scope="row">[^<]+<\/th><td class="num">(\d+)<\/td>/g),
    ]
    expect(months.map((m) => m[1])).toEqual([
      '2027-02',
      '2027-01',
      '2026-12',
      '2026-11',
      '2026-10',
      '2026-09',
      '2026-08',
      '2026-07',
      '2026-06',
      '2026-05',
      '2026-04',
      '2026-03',
      '2026-02',
      '2026-01',
    ])
    expect(months.reduce((sum, m) => sum + Number(m[2]), 0)).toBe(RUNS)
    expect(months.at(-1)![2]).toBe(String(31 * 24)) // January 2026: one run an hour
  })

  it('stays a page a browser opens at once (under 400 kB)', () => {
    expect(Buffer.byteLength(page)).toBeLessThan(400_000)
  })
})
