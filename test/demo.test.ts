// The demo a newcomer runs first: a clean loop says no "warning", tells where it worked, and leaves nothing behind
// unless asked to (--keep); its stub reviewer reports usage, so the budget is complete.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sandbox, tempDir } from './_helpers.ts'
import { expectOk } from './_expect.ts'

/** The demo's folder, as its stderr names it. */
const demoDir = (stderr: string) => /(?:Removed|Kept in) (\S+?pair-loop-demo-[A-Za-z0-9]+)/.exec(stderr)?.[1]

// The demo runs as a process: it starts its stub reviewer (scripts/demo-reviewer) beside itself, in its own runtime.
describe('pair-loop demo', () => {
  it('runs a clean loop with no warning, says where it worked, and removes it', async () => {
    const tmp = tempDir('pl-demo-')
    const sb = sandbox()
    const result = await sb.cliProcess(['demo'], { env: { TMPDIR: tmp } })
    const status = expectOk(result)
    expect(status).toMatchObject({ phase: 'finished', outcome: { verdict: 'APPROVED' } })
    expect(result.stderr).not.toMatch(/warning/i)
    expect(result.stderr).toContain('info: coder: no transcript: demo')
    const dir = demoDir(result.stderr)
    expect(dir, result.stderr).toBeDefined()
    expect(dir!.startsWith(tmp)).toBe(true)
    expect(result.stderr).toContain(`Removed ${dir}`)
    expect(existsSync(dir!)).toBe(false)
    expect(readdirSync(tmp)).toEqual([])
  })

  it('shows one review coming back in flight once, then attached to by the next review, which prints its verdict', async () => {
    const result = await sandbox().cliProcess(['demo'])
    expectOk(result)
    const inFlight = result.stderr.split('\n').filter((line) => line.includes('in_progress=true'))
    expect(inFlight, result.stderr).toHaveLength(1)
    expect(inFlight[0]).toMatch(/^ {2}→ run_id=\S+ round=1 in_progress=true next=review$/)
    // the step after it runs review again, with no reviewer of its own: it attaches to the one in flight
    const after = result.stderr.slice(result.stderr.indexOf(inFlight[0]!) + inFlight[0]!.length)
    expect(after).toMatch(/^\n\n▶ [^\n]+\n {2}\$ pair-loop review\n {2}→ run_id=\S+ round=1 verdict=CHANGES_REQUESTED /)
  })

  it('--keep keeps the repository and its runs, says where and how to remove them', async () => {
    const tmp = tempDir('pl-demo-keep-')
    const result = await sandbox().cliProcess(['demo', '--keep'], { env: { TMPDIR: tmp } })
    const status = expectOk(result)
    const dir = demoDir(result.stderr)!
    expect(result.stderr).toContain(`Kept in ${dir}`)
    expect(result.stderr).toContain(`rm -rf '${dir}'`)
    expect(existsSync(join(dir, 'repo', 'HANDOFF.md'))).toBe(true)
    expect(status.state_path.startsWith(dir)).toBe(true)
    // the stub reported its usage for every call, priced (at $0) under the demo's own model
    const state = JSON.parse(readFileSync(status.state_path, 'utf8'))
    for (const round of state.rounds) {
      expect(round.reviewer.model).toBe('pair-loop-demo-stub')
      expect(round.reviewer.usage.input_tokens).toBeGreaterThan(0)
      expect(round.reviewer.cost).toMatchObject({ usd: 0, unpriced_models: [] })
    }
  })

  it("--keep names the demo's own home in the command that writes its run's page, which runs as said", async () => {
    const sb = sandbox()
    const result = await sb.cliProcess(['demo', '--keep'], { env: { TMPDIR: tempDir('pl-demo-home-') } })
    const dir = demoDir(result.stderr)!
    const said = `PAIR_LOOP_HOME='${dir}/home' pair-loop report --cwd '${dir}/repo'`
    expect(result.stderr).toContain(said)
    const page = expectOk(await sb.cli(['report', '--cwd', `${dir}/repo`], { env: { PAIR_LOOP_HOME: `${dir}/home` } }))
    expect(page.path).toBe(`${dir}/home/reports/${page.runs[0]}.html`)
    expect(existsSync(page.path)).toBe(true)
  })

  it('--text prints the final status for a person', async () => {
    const result = await sandbox().cliProcess(['demo', '--text'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^phase +finished$/m)
    expect(result.stdout).toMatch(/^outcome +APPROVED at /m)
  })
})
