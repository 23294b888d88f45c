// `pair-loop report` as a command: where it writes, what it prints, and its errors (the page itself: report-html and
// report-browser tests).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
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
    const page = join(sb.home, 'reports', `${runId}.html`)
    expect(all).toEqual({ version: 1, path: join(sb.home, 'reports', 'all.html'), runs: [runId], pages: [page] })
    expect(readFileSync(all.path, 'utf8')).toContain(`<tr data-run="${runId}">`)
  })

  it('takes a relative --cwd from the directory the command runs in, never the process’s', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    mkdirSync(join(sb.repo, 'sub'))
    const doc = expectOk(await sb.cli(['report', '--run', runId, '--cwd', 'sub', '--out', 'page.html']))
    expect(doc.path).toBe(join(sb.repo, 'sub', 'page.html'))
    expect(existsSync(join(process.cwd(), 'sub', 'page.html'))).toBe(false)
  })

  it('writes every listed run’s page beside the page of every run, which links each', async () => {
    const sb = sandbox()
    const runId = await startRun(sb)
    const out = join(tempDir('pl-report-all-'), 'runs.html')
    const all = expectOk(await sb.cli(['report', '--all', '--out', out]))
    expect(all.pages).toEqual([join(dirname(out), `${runId}.html`)])
    expect(readFileSync(all.pages[0], 'utf8')).toContain('<h1>demo task</h1>')
    expect(readFileSync(out, 'utf8')).toContain(`<a href="${runId}.html"><code>${runId}</code></a>`)
  })

  it('opens the page with $BROWSER for --open, and says it did', async () => {
    const sb = sandbox()
    await startRun(sb)
    const dir = tempDir('pl-report-open-')
    const browser = join(dir, 'browser.sh')
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${join(dir, 'opened')}'\n`, { mode: 0o755 })
    const doc = expectOk(await sb.cli(['report', '--open'], { env: { BROWSER: browser } }))
    expect(doc.opened).toBe(true)
    const deadline = Date.now() + 5_000
    while (!existsSync(join(dir, 'opened')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(readFileSync(join(dir, 'opened'), 'utf8')).toBe(doc.path)
    expect(expectOk(await sb.cli(['report'])).opened).toBeUndefined() // only when asked
  })

  it('says so on stderr when the browser cannot be started, the page still written', async () => {
    const sb = sandbox()
    await startRun(sb)
    const result = await sb.cli(['report', '--open'], { env: { BROWSER: join(tempDir('pl-none-'), 'no-browser') } })
    expect(expectOk(result).opened).toBe(false)
    expect(result.stderr).toMatch(/could not open the page with .*no-browser/)
    expect(existsSync(expectOk(result).path)).toBe(true)
  })

  it('writes a page for --all with no run at all', async () => {
    const sb = sandbox()
    const doc = expectOk(await sb.cli(['report', '--all']))
    expect(doc.runs).toEqual([])
    expect(readFileSync(doc.path, 'utf8')).toContain('No run yet.')
  })

  it('refuses --all with --run (usage), no run here (run_not_found), and a folder as --out (usage, never opened)', async () => {
    const sb = sandbox()
    expect(expectError(await sb.cli(['report']), 'run_not_found')).toBeTruthy()
    const runId = await startRun(sb)
    expect(expectError(await sb.cli(['report', '--all', '--run', runId]), 'usage').flag).toBe('--run')
    const folder = join(tempDir('pl-report-dir-'), 'taken')
    mkdirSync(folder)
    expect(expectError(await sb.cli(['report', '--out', folder]), 'usage')).toMatchObject({
      flag: '--out',
      file: folder,
    })
  })
})
