import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { scanClaude } from '../../lib/cost/claude.ts'
import { codexRolloutForThread } from '../../lib/agents/locate.ts'
import { KEEP_FINISHED_MS, pruneCaches, pruneCachesDaily } from '../../lib/cost/prune.ts'
import { expectOk } from '../_expect.ts'
import { sandbox, tempDir } from '../_helpers.ts'
import type { RunState } from '../../lib/run/state.ts'
import { runState } from '../_state.ts'
import { claudeAssistant, writeLines } from './_gen.ts'

// Caches under $PAIR_LOOP_HOME/cache/ do not grow for good (issue 11, item 17).

const NOW = Date.parse('2026-12-01T00:00:00.000Z')
const usage = { input: 10, output: 5, w5m: 0, w1h: 0, read: 0 }

/** A Claude transcript and its cache in `home`'s cache folder. */
function cachedTranscript(home: string, name: string): string {
  const path = join(tempDir('pl-prune-t-'), `${name}.jsonl`)
  writeLines(path, [
    claudeAssistant({ sessionId: name, ts: '2026-11-30T05:00:00.000Z', model: 'claude-sonnet-4-5', usage }),
  ])
  scanClaude(path, join(home, 'cache'))
  return path
}

const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : [])

describe('pruning the caches', () => {
  it("removes a transcript's cache once the transcript is gone, and keeps the others", () => {
    const home = tempDir('pl-prune-')
    const kept = cachedTranscript(home, 'kept')
    const gone = cachedTranscript(home, 'gone')
    const dir = join(home, 'cache', 'transcripts')
    expect(files(dir)).toHaveLength(2)
    rmSync(gone)
    expect(pruneCaches([], home, NOW).transcripts).toBe(1)
    expect(files(dir)).toHaveLength(1)
    scanClaude(kept, join(home, 'cache')) // still usable
    expect(files(dir)).toHaveLength(1)
  })

  it('removes files in the transcript cache folder that are not caches at all (an older format)', () => {
    const home = tempDir('pl-prune-')
    mkdirSync(join(home, 'cache', 'transcripts'), { recursive: true })
    writeFileSync(join(home, 'cache', 'transcripts', 'claude-old.json'), '{"v":0}')
    expect(pruneCaches([], home, NOW).transcripts).toBe(1)
  })

  const finishedRuns = [
    ['an active run', null, true],
    ['a run finished 29 days ago', NOW - 29 * 86_400_000, true],
    ['a run finished 31 days ago', NOW - 31 * 86_400_000, false],
  ] as const
  it.each(
    (['summaries', 'pr-state'] as const).flatMap((folder) => finishedRuns.map((row) => [folder, ...row] as const)),
  )('keeps or removes the cache/%s file of %s', (folder, _name, finishedAt, kept) => {
    const home = tempDir('pl-prune-')
    const run = runState({
      outcome: finishedAt === null ? null : { verdict: 'ABANDONED', finished_at: new Date(finishedAt).toISOString() },
    })
    const dir = join(home, 'cache', folder)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `${run.run_id}.json`), '{}')
    writeFileSync(join(dir, '20200101-000000-000000.json'), '{}') // a run that no longer exists
    pruneCaches([run], home, NOW)
    expect(files(dir)).toEqual(kept ? [`${run.run_id}.json`] : [])
    expect(KEEP_FINISHED_MS).toBe(30 * 86_400_000)
  })

  it('prunes at most once a day', () => {
    const home = tempDir('pl-prune-')
    expect(pruneCachesDaily(() => [], home, NOW)).toEqual({ transcripts: 0, summaries: 0, pr_states: 0, snapshots: 0 })
    expect(pruneCachesDaily(() => [], home, NOW + 3_600_000)).toBeNull()
    utimesSync(join(home, 'cache', '.pruned'), (NOW - 2 * 86_400_000) / 1000, (NOW - 2 * 86_400_000) / 1000)
    expect(pruneCachesDaily(() => [], home, NOW)).not.toBeNull()
  })
})

describe('start and finish', () => {
  it('prune the caches: a cache whose transcript is gone is removed when a run starts', async () => {
    const sb = sandbox()
    const stale = join(sb.home, 'cache', 'transcripts', 'claude-0000000000000.bin')
    mkdirSync(join(sb.home, 'cache', 'transcripts'), { recursive: true })
    writeFileSync(stale, 'left by an older version')
    expectOk(await sb.cli(['start', '--task', 'x']))
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(join(sb.home, 'cache', '.pruned'))).toBe(true)
  })
})

describe("a Codex thread's rollout", () => {
  const thread = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'

  it('is found once by walking the sessions, then from the remembered path; a path gone sends it walking again', () => {
    const home = tempDir('pl-rollout-')
    const env = { CODEX_HOME: join(home, 'codex'), PAIR_LOOP_HOME: join(home, 'pl'), HOME: home }
    const day = join(env.CODEX_HOME, 'sessions', '2026', '11', '30')
    const path = join(day, `rollout-2026-11-30T05-00-00-${thread}.jsonl`)
    writeLines(path, [{ type: 'session_meta', payload: { id: thread } }])
    expect(codexRolloutForThread(thread, env)).toBe(path)
    expect(JSON.parse(readFileSync(join(env.PAIR_LOOP_HOME, 'cache', 'codex-rollouts.json'), 'utf8'))).toEqual({
      [thread]: path,
    })
    // the sessions tree is not walked again: a rollout added elsewhere since is not seen until the path is gone
    const moved = join(env.CODEX_HOME, 'archived_sessions', `rollout-2026-11-30T05-00-00-${thread}.jsonl`)
    writeLines(moved, [{ type: 'session_meta', payload: { id: thread } }])
    expect(codexRolloutForThread(thread, env)).toBe(path)
    rmSync(path)
    expect(codexRolloutForThread(thread, env)).toBe(moved)
  })
})

describe('pruning the snapshot store', () => {
  it('removes objects and manifests not written for 30 days, and keeps the manifest of a tree a kept run reviewed', () => {
    const home = tempDir('pl-prune-s-')
    const at = (days: number) => (NOW - days * 86_400_000) / 1000
    const put = (path: string, days: number) => {
      mkdirSync(join(path, '..'), { recursive: true })
      writeFileSync(path, 'x')
      utimesSync(path, at(days), at(days))
    }
    const objects = join(home, 'store', 'sha1.git', 'objects', 'ab')
    put(join(objects, 'old'), 31)
    put(join(objects, 'fresh'), 1)
    const trees = join(home, 'cache', 'snapshot', 'trees')
    put(join(trees, `${'a'.repeat(40)}.json`), 40) // reviewed by a kept run
    put(join(trees, `${'b'.repeat(40)}.json`), 40)
    const round = { n: 1, coder: { tree: 'c'.repeat(40) }, reviewer: { tree: 'a'.repeat(40) } }
    const run = { ...runState(), rounds: [round] } as unknown as RunState
    expect(pruneCaches([run], home, NOW).snapshots).toBe(2)
    expect(files(objects)).toEqual(['fresh'])
    expect(files(trees)).toEqual([`${'a'.repeat(40)}.json`])
  })
})
