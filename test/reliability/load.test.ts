// Load: many `reply` processes at once on one run. Nothing lost, nothing doubled, revision exact, HANDOFF.md in step.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { renderHandoff } from '../../lib/run/handoff.ts'
import { runsDir } from '../../lib/ground/paths.ts'
import { parseRunState } from '../../lib/run/store.ts'
import { recordReview, sandbox } from '../_helpers.ts'
import { expectError, expectOk, reviewWith, runInReview } from '../_expect.ts'

const DISTINCT = 32
const SAME = 8

describe('load: concurrent reply processes on one run', () => {
  it(`records all ${DISTINCT} replies to distinct findings and exactly one of ${SAME} to the same finding, with revision up by exactly ${DISTINCT + 1}`, async () => {
    const sb = sandbox()
    const runId = await runInReview(sb)
    // findings 1.1 … 1.32 get one reply each; 1.33 is the one all eight race for
    const before = await recordReview(sb.home, runId, reviewWith(DISTINCT + 1))
    expect(before.rounds[0]!.reviewer!.findings).toHaveLength(DISTINCT + 1)
    const distinctIds = Array.from({ length: DISTINCT }, (_, i) => `1.${i + 1}`)
    const contested = `1.${DISTINCT + 1}`

    const started = Date.now()
    const reply = (id: string, body: string) =>
      sb.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], { input: body })
    const jobs = [
      ...distinctIds.map((id) =>
        reply(id, `answer to ${id}`).then((result) => ({ id, body: `answer to ${id}`, result })),
      ),
      ...Array.from({ length: SAME }, (_, i) =>
        reply(contested, `racer ${i}`).then((result) => ({ id: contested, body: `racer ${i}`, result })),
      ),
    ]
    const outcomes = await Promise.all(jobs)
    const wallMs = Date.now() - started
    process.stderr.write(`[reliability/load] ${jobs.length} reply processes finished in ${wallMs} ms\n`)

    // every distinct reply is recorded, as given
    for (const { id, result } of outcomes.filter((o) => o.id !== contested)) {
      expect(expectOk(result)).toMatchObject({ finding: id, disposition: 'fixed' })
    }
    // one racer wins; the other seven see duplicate_reply naming the winner's answer
    const racers = outcomes.filter((o) => o.id === contested)
    const winners = racers.filter((o) => o.result.code === 0)
    expect(winners).toHaveLength(1)
    const after = parseRunState(readFileSync(join(runsDir(sb.home), `${runId}.json`), 'utf8'), 'state')
    const losers = racers.filter((o) => o.result.code !== 0)
    expect(losers).toHaveLength(SAME - 1)
    for (const loser of losers)
      expect(expectError(loser.result, 'duplicate_reply').recorded).toEqual(after.replies[contested])

    expect(Object.keys(after.replies)).toHaveLength(DISTINCT + 1)
    for (const id of distinctIds) expect(after.replies[id]!.body).toBe(`answer to ${id}`)
    expect(after.replies[contested]!.body).toBe(winners[0]!.body)
    expect(after.revision).toBe(before.revision + DISTINCT + 1)
    // HANDOFF.md is the render of the final state, byte for byte; no temp file or lock left behind
    expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toBe(renderHandoff(after))
    expect(readdirSync(runsDir(sb.home)).filter((name) => name.endsWith('.tmp') || name.endsWith('.lock'))).toEqual([])
    expect(readdirSync(sb.repo).filter((name) => name.endsWith('.tmp'))).toEqual([])
  }, 120_000)
})
