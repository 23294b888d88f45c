// pr-stop (issue 20, item 9): the person takes the PR over; the watch ends, recorded once, and nothing names pr-check
// next any more, though pr-check may still read the PR.
import { describe, expect, it } from 'vitest'
import { expectError, expectOk } from './_expect.ts'
import { prSandbox } from './_pr.ts'

describe('pr-stop', () => {
  it('ends the watch: status and pr-check name no next step after it, where before they named pr-check', async () => {
    const sb = await prSandbox()
    expect(expectOk(await sb.cli(['status'])).next).toBe('pr-check') // positive control: the watch was on
    const stopped = expectOk(await sb.cli(['pr-stop', '--reason', 'I will finish this one myself']))
    expect(stopped).toMatchObject({ stopped: true, reason: 'I will finish this one myself', next: null })
    expect(expectOk(await sb.cli(['status'])).next).toBeNull()
    const tick = expectOk(await sb.cli(['pr-check']))
    expect(tick.next).toBeNull()
    expect(tick.stopped).toMatchObject({ reason: 'I will finish this one myself' })
  })

  it('keeps the first record when it is run again', async () => {
    const sb = await prSandbox()
    const first = expectOk(await sb.cli(['pr-stop', '--reason', 'first']))
    const again = expectOk(await sb.cli(['pr-stop', '--reason', 'second']))
    expect(again).toMatchObject({ reason: 'first', at: first.at })
    expect(sb.state(sb.runId).pr_watch?.stopped).toEqual({ at: first.at, reason: 'first' })
  })

  it('refuses an empty --reason as usage, and changes nothing', async () => {
    const sb = await prSandbox()
    const before = sb.state(sb.runId)
    expect(expectError(await sb.cli(['pr-stop', '--reason', '  ']), 'usage').flag).toBe('--reason')
    expect(sb.state(sb.runId)).toEqual(before)
  })
})
