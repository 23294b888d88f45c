// The tick's flags and failures (issue 20, item 12), through the fake GitHub: --page-size (GitHub's 100 by default),
// --timeout, --snapshot-out, --now; a failed tick keeps its error on the run; `locked` names who holds the run;
// `gh_error` says whether trying again can help.
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { withLock } from '../lib/ground/lock.ts'
import { runStatePath } from '../lib/ground/paths.ts'
import { tempDir } from './_helpers.ts'
import { expectError, expectOk } from './_expect.ts'
import { at, BOT, comment, operationOf, prSandbox, T0, thread, world } from './_pr.ts'

const count = (calls: string[][], operation: string) => calls.filter((call) => operationOf(call) === operation).length
const manyThreads = (n: number) =>
  Array.from({ length: n }, (_, i) => thread(`PRRT_${i}`, [comment(100 + i, BOT, `nit ${i}`)], { is_resolved: true }))
/** The sandbox's own page size (2, so small tests page) taken away: the command's default applies. */
const DEFAULT_PAGING = { PAIR_LOOP_GH_PAGE_SIZE: '' }

describe('pr-check --page-size', () => {
  it('reads 100 items a page by default: 150 threads in 2 pages', async () => {
    const sb = await prSandbox(world({ threads: manyThreads(150), page_size: 1000 }))
    expectOk(await sb.cli(['pr-check'], { env: DEFAULT_PAGING }))
    expect(count(sb.calls(), 'PrThreads')).toBe(2)
  })

  it('reads the pages it is told to: 7 threads at --page-size 3 in 3 pages', async () => {
    const sb = await prSandbox(world({ threads: manyThreads(7), page_size: 1000 }))
    const doc = expectOk(await sb.cli(['pr-check', '--page-size', '3'], { env: DEFAULT_PAGING }))
    expect(doc.threads.total).toBe(7)
    expect(count(sb.calls(), 'PrThreads')).toBe(3)
  })

  it('refuses a page size GitHub would not serve', async () => {
    const sb = await prSandbox()
    expect(expectError(await sb.cli(['pr-check', '--page-size', '101']), 'usage').flag).toBe('--page-size')
    expect(sb.calls()).toEqual([])
  })
})

describe('pr-check --timeout', () => {
  it('ends a gh call that outruns it and tries the read again', async () => {
    const sb = await prSandbox(world({ faults: [{ match: 'query PrHead', status: 'timeout', times: 1 }] }))
    const started = Date.now()
    const doc = expectOk(await sb.cli(['pr-check', '--timeout', '1']))
    expect(doc.decision).toBe('success')
    expect(count(sb.calls(), 'PrHead')).toBe(2)
    expect(Date.now() - started).toBeLessThan(20_000) // the fake sleeps 30 s on a timeout fault
  }, 40_000)
})

describe('pr-check --snapshot-out', () => {
  it('writes the snapshot the tick read to the file named, as it keeps it beside the state', async () => {
    const sb = await prSandbox(world({ threads: [thread('PRRT_1', [comment(11, BOT, 'rename i')])] }))
    const out = join(tempDir('pl-snap-'), 'tick.json')
    const doc = expectOk(await sb.cli(['pr-check', '--snapshot-out', out]))
    const written = JSON.parse(readFileSync(out, 'utf8'))
    expect(written).toEqual(JSON.parse(readFileSync(doc.snapshot_path, 'utf8')))
    expect(written.threads.map((t: { id: string }) => t.id)).toEqual(['PRRT_1'])
  })
})

describe('pr-check --now', () => {
  it("is the tick's clock: a PR with no check is pending at first, passing 11 minutes later", async () => {
    const sb = await prSandbox(world({ checks: [] }))
    const first = expectOk(await sb.cli(['pr-check', '--now', T0]))
    expect(first.ci.status).toBe('pending')
    expect(sb.state(sb.runId).pr_watch).toMatchObject({ last_tick_at: T0, observed: { head_seen_at: T0 } })
    const later = expectOk(await sb.cli(['pr-check', '--now', at(11)]))
    expect(later).toMatchObject({ decision: 'success', ci: { status: 'pass' } })
    expect(sb.state(sb.runId).pr_watch!.last_tick_at).toBe(at(11))
  })

  it('refuses a time that is not ISO 8601', async () => {
    const sb = await prSandbox()
    expect(expectError(await sb.cli(['pr-check', '--now', 'yesterday']), 'usage').flag).toBe('--now')
  })
})

describe('a failed tick', () => {
  it('keeps its error on the run, the rest of the PR state as it was, until a tick succeeds', async () => {
    const sb = await prSandbox()
    expectOk(await sb.cli(['pr-check', '--now', T0]))
    const before = sb.state(sb.runId).pr_watch!
    sb.change((w) => {
      w.faults = [{ match: 'query PrThreads', status: 404, times: 1 }]
    })
    const failed = expectError(await sb.cli(['pr-check', '--now', at(5)]), 'gh_error')
    const watch = sb.state(sb.runId).pr_watch!
    expect(watch.last_error).toEqual({ code: 'gh_error', message: failed.message, at: at(5) })
    expect({ ...watch, last_error: null }).toEqual(before)
    expectOk(await sb.cli(['pr-check', '--now', at(6)]))
    expect(sb.state(sb.runId).pr_watch!.last_error).toBeNull()
  })
})

describe('locked', () => {
  it("names the holder's pid and host", async () => {
    const sb = await prSandbox()
    const error = await withLock(runStatePath(sb.runId, sb.home), async () =>
      expectError(await sb.cli(['pr-check'], { env: { PAIR_LOOP_LOCK_WAIT_MS: '300' } }), 'locked'),
    )
    expect(error).toMatchObject({ pid: process.pid, host: hostname(), since: expect.any(String) })
    expect(error.message).toContain(`pid ${process.pid} on ${hostname()}`)
  })
})

describe("gh_error's retryable", () => {
  it('is false when GitHub answered a 4xx other than 429 (asking again gets the same answer)', async () => {
    const sb = await prSandbox(world({ faults: [{ match: 'query PrMeta', status: 404, times: 1 }] }))
    expect(expectError(await sb.cli(['pr-check']), 'gh_error')).toMatchObject({ failure: 'refused', retryable: false })
  })

  it('is false when gh is missing', async () => {
    const sb = await prSandbox()
    const error = expectError(
      await sb.cli(['pr-check'], { env: { PAIR_LOOP_GH: join(tempDir('pl-nogh-'), 'gh') } }),
      'gh_error',
    )
    expect(error).toMatchObject({ failure: 'missing', retryable: false })
  })

  it('is true when GitHub kept failing with a 5xx through every retry', async () => {
    const sb = await prSandbox(world({ faults: [{ match: 'query PrMeta', status: 502, times: 3 }] }))
    const result = await sb.cli(['pr-check'])
    expect(result.code).toBe(18) // stderr also says each retry, so not expectError's one line
    expect(result.json.errors[0]).toMatchObject({ code: 'gh_error', failure: 'server', retryable: true })
  })
})
