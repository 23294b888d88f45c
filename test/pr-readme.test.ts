// docs/pr-phase.md ("After the PR") shows a real pr-check document: the same scenario against the fake GitHub prints it again,
// field for field (only the run's id and the snapshot's path differ from run to run).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './_helpers.ts'
import { expectOk } from './_expect.ts'
import { prSandbox, README_SCENARIO as SCENARIO } from './_pr.ts'

function shownDocument(): Record<string, unknown> {
  const doc = readFileSync(join(ROOT, 'docs', 'pr-phase.md'), 'utf8')
  return JSON.parse(/```json\n([\s\S]*?)```/.exec(doc)![1]!)
}

describe('docs/pr-phase.md: After the PR', () => {
  it('shows the document pr-check prints for its scenario', async () => {
    const sb = await prSandbox(SCENARIO)
    const doc = expectOk(await sb.cli(['pr-check']))
    const { run_id: _run, snapshot_path: _path, state_path: _state, schedule_name: name, ...printed } = doc
    const shownDoc = shownDocument()
    const { run_id: shownRun, snapshot_path: _shownPath, state_path: _shownState, ...shown } = shownDoc
    const { schedule_name: shownName, ...shownRest } = shown
    expect(printed).toEqual(shownRest)
    // the paths and the schedule name carry the run id: the same shape, this run's id
    expect(name).toBe(String(shownName).replace(String(shownRun), doc.run_id))
  })
})
