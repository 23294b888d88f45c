import { describe, expect, it } from 'vitest'
import { recordReview, sandbox } from './_helpers.ts'

describe('smoke', () => {
  it('runs a loop through a recorded review', async () => {
    const sb = sandbox()
    const start = await sb.cli(['start', '--task', 'demo'])
    expect(start.code, start.stderr).toBe(0)
    const runId = start.json.run_id
    expect((await sb.cli(['coder-done', '--summary', 'did it'])).code).toBe(0)
    const state = await recordReview(sb.home, runId, '1. [bug/major] a.ts:3 — off by one\nVERDICT: CHANGES_REQUESTED')
    expect(state.phase).toBe('coding')
    const reply = await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'], { input: 'fixed it' })
    expect(reply.json).toMatchObject({ finding: '1.1', disposition: 'fixed' })
  })
})
