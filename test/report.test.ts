// `pair-loop report` as a command: where it writes, what it prints, and its errors (the page itself: report-html and
// report-browser tests).
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectError, expectOk, startRun } from './_expect.ts'
import { sandbox, tempDir } from './_helpers.ts'

describe('pair-loop report', () => {
  it('writes the active run’s page under $PAIR_LOOP_HOME/reports by default, before any round', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const doc = expectOk(await sb.cli(['report']))
    expect(doc).toEqual({ version: 1, path: join(sb.home, 'reports', `${runId}.html`), runs: [runId] })
    const page = readFileSync(doc.path, 'utf8')
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect(page).toContain('<h1>demo task</h1>')
    expect(page).toContain('No round yet')
  })

  it('writes --out relative to --cwd, and --all over every run of the home', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const elsewhere = tempDir('pl-report-out-')
    const one = expectOk(await sb.cli(['report', '--run', runId, '--out', 'one.html', '--cwd', elsewhere]))
    expect(one.path).toBe(join(elsewhere, 'one.html'))
    expect(existsSync(one.path)).toBe(true)
    const all = expectOk(await sb.cli(['report', '--all']))
    expect(all).toEqual({ version: 1, path: join(sb.home, 'reports', 'all.html'), runs: [runId] })
    expect(readFileSync(all.path, 'utf8')).toContain(`<tr data-run="${runId}">`)
  })

  it('writes a page for --all with no run at all', async () => {
    const sb = sandbox()
    const doc = expectOk(await sb.cli(['report', '--all']))
    expect(doc.runs).toEqual([])
    expect(readFileSync(doc.path, 'utf8')).toContain('No run yet.')
  })

  it('refuses --all with --run (usage), no run here (run_not_found), and a folder as --out (io_error)', async () => {
    const sb = sandbox()
    expect(expectError(await sb.cli(['report']), 'run_not_found')).toBeTruthy()
    const runId = await startRun(sb)
    expect(expectError(await sb.cli(['report', '--all', '--run', runId]), 'usage').flag).toBe('--run')
    const folder = join(tempDir('pl-report-dir-'), 'taken')
    mkdirSync(folder)
    expect(expectError(await sb.cli(['report', '--out', folder]), 'io_error').path).toBe(folder)
  })
})
