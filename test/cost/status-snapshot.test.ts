// status's cost snapshot (lib/cost/status-snapshot.ts): the last figures while nothing they came from has changed.
// Reuse and recomputation look alike when the prices stay put, so each second call is handed other prices: only a
// recomputation reads them. Expected figures by hand from transcripts-and-pricing.md §5 (Sonnet 4.5: $3 in, $15 out).
import { mkdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Config } from '../../lib/run/config.ts'
import { claudeProjectDir } from '../../lib/agents/locate.ts'
import { cachedCostSummary } from '../../lib/cost/status-snapshot.ts'
import { tempDir } from '../_helpers.ts'
import { claudeAssistant, makeRun, writeLines } from './_gen.ts'

const SONNET = 'claude-sonnet-4-5-20250929'
const SESSION = 'c0000000-0000-4000-8000-000000000001'
const TABLE = (1000 * 3 + 1000 * 15) / 1e6
const TENFOLD = (1000 * 30 + 1000 * 150) / 1e6
const tenfold: Pick<Config, 'pricing'> = { pricing: { [SONNET]: { input: 30, output: 150 } } }

/** A coding run whose coder has one session of one response (1000 in, 1000 out) in the repository's folder. */
function runWithSession() {
  const root = tempDir('pl-snapshot-')
  const repo = join(root, 'repo')
  mkdirSync(repo)
  const env = {
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    PAIR_LOOP_HOME: join(root, 'pl'),
    HOME: root,
  }
  const run = makeRun({ repo: realpathSync(repo), created_at: '2026-01-05T00:00:00.000Z' })
  const transcript = join(claudeProjectDir(run.repo, env), `${SESSION}.jsonl`)
  const response = (n: number) =>
    claudeAssistant({
      sessionId: SESSION,
      ts: `2026-01-05T0${n}:00:00.000Z`,
      id: `msg_${n}`,
      requestId: `req_${n}`,
      model: SONNET,
      usage: { input: 1000, output: 1000, w5m: 0, w1h: 0, read: 0 },
    })
  writeLines(transcript, [response(1)])
  return { run, env, transcript, response }
}

describe("status's cost snapshot", () => {
  it("while nothing it came from changed, the figures are the snapshot's, not computed again", async () => {
    const { run, env } = runWithSession()
    expect((await cachedCostSummary(run, () => ({ pricing: {} }), env)).total_usd).toBeCloseTo(TABLE, 12)
    let configReads = 0
    const again = await cachedCostSummary(
      run,
      () => {
        configReads++
        return tenfold
      },
      env,
    )
    expect(again.total_usd, 'the prices of the first computation').toBeCloseTo(TABLE, 12)
    expect(configReads, 'the config is read only to compute').toBe(0)
  })

  it('a new response in a transcript it read makes it compute again, at the prices of now', async () => {
    const { run, env, transcript, response } = runWithSession()
    expect((await cachedCostSummary(run, () => ({ pricing: {} }), env)).total_usd).toBeCloseTo(TABLE, 12)
    writeLines(transcript, [response(2)], { append: true })
    expect((await cachedCostSummary(run, () => tenfold, env)).total_usd).toBeCloseTo(2 * TENFOLD, 12)
  })
})
