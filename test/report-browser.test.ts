// `pair-loop report` opened in a real browser (Debian's Chromium, driven by playwright-core): a real two-round loop with
// the stub reviewers, its page read back from the DOM (rounds, findings, replies, recurrences, totals equal to
// budget-check's own figures), dark and print styles applied, nothing loaded but the file, no agent text run as markup;
// then `--all` over three runs. Screenshots go to the test's own temp folder (PAIR_LOOP_TEST_KEEP=1 keeps them).
import { existsSync, realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { claudeProjectFolder } from '../lib/cost/locate.ts'
import { browserAvailable, chromiumDescendants, launchChromium } from './_browser.ts'
import { expectOk, type Sandbox, writeChange } from './_expect.ts'
import { sandbox, tempDir } from './_helpers.ts'
import { goneWithin, reviewArgs } from './_review.ts'
import { claudeAssistant, writeLines } from './cost/_gen.ts'

const SLOW = 120_000
const SHOTS = tempDir('report-shots-')

/** The coder (Claude Code, haiku at $1 per million input tokens) spends these dollars in session `sid`, now. */
function spend(sb: Sandbox, sid: string, dollars: number[]): void {
  const path = join(sb.env.CLAUDE_CONFIG_DIR!, 'projects', claudeProjectFolder(realpathSync(sb.repo)), `${sid}.jsonl`)
  const now = Date.now()
  const lines = dollars.map((d, i) =>
    claudeAssistant({
      sessionId: sid,
      ts: new Date(now + i).toISOString(),
      id: `msg_${sid}_${now}_${i}`,
      requestId: `req_${sid}_${now}_${i}`,
      model: 'claude-haiku-4-5-20251001',
      usage: { input: Math.round(d * 1_000_000), output: 0, w5m: 0, w1h: 0, read: 0 },
    }),
  )
  writeLines(path, lines, { append: true })
}

const reply = (sb: Sandbox, finding: string, disposition: string, body: string) =>
  sb.cli(['reply', '--finding', finding, '--disposition', disposition, '--body-file', '-'], { input: body })

/** budget-check's document: the independent figure the report's totals must equal (taken before `finish`). */
const budgetCheck = async (sb: Sandbox) => expectOk(await sb.cli(['budget-check']))

// what changes.sh says (fixtures/reviewers/_common.sh), copied by hand
const STUB_FINDINGS = [
  { id: '1.1', place: 'src/a.ts:3-5', text: 'the loop bound is off by one: the last element is never visited' },
  { id: '1.2', place: 'src/a.test.ts:1', text: 'no test covers an empty input' },
]
const REPLIES = [
  { finding: '1.1', disposition: 'fixed', body: 'The loop now runs to values.length.' },
  { finding: '1.2', disposition: 'fixed', body: 'Added a test for [].' },
]
const TASK = 'Fix the off-by-one in sum()'
const HOSTILE_TASK = `Escape <script>window.__pwned = 'task'</script> titles <img src=x onerror="window.__pwned='img'">`
const HOSTILE_FINDING = `1. [security/blocker] src/x.ts:1 — <script>window.__pwned = 'finding'</script><b>bold?</b> & "quotes"`

interface Loop {
  sb: Sandbox
  runId: string
  budget: any
}

/** Run A: changes requested (two findings, both answered), then approved; the coder spends $0.25, then $0.15. */
async function twoRoundLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', TASK, '--budget-usd', '1']))
  spend(sb, 'aaaaaaaa-0000-4000-8000-000000000001', [0.15, 0.1])
  writeChange(sb, 'src.ts', 'export const sum = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Loop bound fixed in sum().']))
  expect(expectOk(await sb.cli(reviewArgs('changes'))).verdict).toBe('CHANGES_REQUESTED')
  for (const r of REPLIES) expectOk(await reply(sb, r.finding, r.disposition, r.body))
  spend(sb, 'aaaaaaaa-0000-4000-8000-000000000001', [0.15])
  writeChange(sb, 'src.ts', 'export const sum = 2\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Test for the empty list added.']))
  expect(expectOk(await sb.cli(reviewArgs('approve'))).verdict).toBe('APPROVED')
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
  return { sb, runId, budget }
}

/** Run B: capped at two rounds, the same two findings back after their replies (recurring), closed unapproved. */
async function cappedLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', 'Speed up the parser', '--max-rounds', '2']))
  spend(sb, 'bbbbbbbb-0000-4000-8000-000000000002', [0.05])
  writeChange(sb, 'src.ts', 'export const parse = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Parser rewritten.']))
  expectOk(await sb.cli(reviewArgs('changes')))
  for (const r of REPLIES) expectOk(await reply(sb, r.finding, r.disposition, r.body))
  writeChange(sb, 'src.ts', 'export const parse = 2\n')
  expectOk(await sb.cli(['coder-done', '--summary', 'Second try.']))
  expect(expectOk(await sb.cli(reviewArgs('changes'))).next).toBe('ask-user')
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'CHANGES_REQUESTED']))
  return { sb, runId, budget }
}

/** Run C: hostile agent text everywhere (task, finding, reply), abandoned after one round. */
async function hostileLoop(sb: Sandbox): Promise<Loop> {
  const { run_id: runId } = expectOk(await sb.cli(['start', '--task', HOSTILE_TASK]))
  writeChange(sb, 'src.ts', 'export const x = 1\n')
  expectOk(await sb.cli(['coder-done', '--summary', '<iframe src="x"></iframe>']))
  expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: HOSTILE_FINDING } }))
  expectOk(await reply(sb, '1.1', 'wont-fix', '</div><script>window.__pwned = "reply"</script>'))
  const budget = await budgetCheck(sb)
  expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
  return { sb, runId, budget }
}

// one repository and home for the three runs, made as the tests first need them
const shared = sandbox()
let loopA: Promise<Loop> | undefined
let loopsBC: Promise<[Loop, Loop]> | undefined
const runA = () => (loopA ??= twoRoundLoop(shared))
const runsBC = () => (loopsBC ??= runA().then(async () => [await cappedLoop(shared), await hostileLoop(shared)]))

let browser: Browser | undefined
const seenBrowserPids = new Set<number>()
async function openReport(path: string): Promise<{ page: Page; requests: string[] }> {
  browser ??= await launchChromium()
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, colorScheme: 'light' })
  const requests: string[] = []
  page.on('request', (request) => requests.push(request.url()))
  await page.goto(`file://${path}`)
  for (const pid of chromiumDescendants()) seenBrowserPids.add(pid)
  return { page, requests }
}

afterAll(async () => {
  await browser?.close()
})

const texts = (page: Page, selector: string) => page.locator(selector).allTextContents()
const usdOf = async (page: Page, selector: string) => Number(await page.locator(selector).getAttribute('data-usd'))

describe.skipIf(!browserAvailable)('pair-loop report in Chromium', () => {
  it(
    'shows a two-round run: both rounds, the findings with their replies, and totals equal to budget-check',
    async () => {
      const { sb, runId, budget } = await runA()
      const doc = expectOk(await sb.cli(['report']))
      expect(doc).toEqual({ version: 1, path: join(sb.home, 'reports', `${runId}.html`), runs: [runId] })
      const { page, requests } = await openReport(doc.path)

      expect(await page.title()).toBe(`${TASK} — pair-loop run ${runId}`)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(TASK)
      const rounds = page.locator('li.round')
      expect(await rounds.count()).toBe(2)
      expect(
        await rounds.locator('h3 [data-verdict]').evaluateAll((els) => els.map((e) => e.getAttribute('data-verdict'))),
      ).toEqual(['CHANGES_REQUESTED', 'APPROVED'])
      expect(await texts(page, '#round-1 .coder-summary')).toEqual(['Loop bound fixed in sum().'])
      expect(await texts(page, '#round-1 .finding-id')).toEqual(STUB_FINDINGS.map((f) => f.id))
      expect(await texts(page, '#round-1 .finding-head code')).toEqual(STUB_FINDINGS.map((f) => f.place))
      expect(await texts(page, '#round-1 .finding-text')).toEqual(STUB_FINDINGS.map((f) => f.text))
      expect(
        await page.locator('#round-1 .reply').evaluateAll((els) => els.map((e) => e.getAttribute('data-reply'))),
      ).toEqual(REPLIES.map((r) => r.disposition))
      expect(await texts(page, '#round-1 .reply-body')).toEqual(REPLIES.map((r) => r.body))
      expect(await page.locator('#round-2 .finding').count()).toBe(0)
      expect(await page.locator('#round-2').textContent()).toContain('No findings.')

      // the totals: budget-check's own figures, exactly, and the rounded ones a person reads
      expect(budget.spent).toBeCloseTo(0.4, 12) // $0.25 then $0.15, as spent above
      expect(await usdOf(page, 'tfoot [data-cost="total"]')).toBe(budget.spent)
      expect(await usdOf(page, 'tfoot [data-cost="coder-total"]')).toBe(budget.by_role.coder.usd)
      expect(await usdOf(page, 'tfoot [data-cost="reviewer-total"]')).toBe(budget.by_role.reviewer.usd)
      expect(await page.locator('tfoot [data-cost="total"]').textContent()).toBe('$0.4000')
      expect(await page.locator('dd [data-cost="spent"]').textContent()).toBe('$0.4000')
      for (const round of budget.rounds) {
        expect(await usdOf(page, `tr[data-round="${round.n}"] [data-cost="coder"]`)).toBe(round.coder.usd)
        expect(await usdOf(page, `tr[data-round="${round.n}"] [data-cost="reviewer"]`)).toBe(round.reviewer.usd)
      }
      expect(await texts(page, 'tbody [data-cost="coder"]')).toEqual(['$0.2500', '$0.1500'])

      // the chart: an image with a name and a description, its bars and the budget line
      const chart = page.getByRole('img', { name: 'Cost per round and role' })
      expect(await chart.isVisible()).toBe(true)
      expect(await chart.locator('desc').textContent()).toContain('The budget is $1.00.')
      expect(await chart.locator('.round-bars').count()).toBe(2)
      expect(await chart.locator('line.budget-line').count()).toBe(1)
      expect(await page.getByRole('table', { name: 'Cost per round and role' }).isVisible()).toBe(true)

      expect(requests).toEqual([`file://${doc.path}`])
      await page.screenshot({ path: join(SHOTS, 'report-run.png'), fullPage: true })
      expect(statSync(join(SHOTS, 'report-run.png')).size).toBeGreaterThan(10_000)
      await page.close()
    },
    SLOW,
  )

  it(
    'follows dark mode and prints light, on paper as a PDF',
    async () => {
      const { sb, runId } = await runA()
      const path = join(sb.home, 'reports', `${runId}.html`)
      if (!existsSync(path)) expectOk(await sb.cli(['report']))
      const { page } = await openReport(path)
      const background = () => page.evaluate<string>('getComputedStyle(document.body).backgroundColor')
      expect(await background()).toBe('rgb(255, 255, 255)')
      await page.emulateMedia({ colorScheme: 'dark' })
      expect(await background()).toBe('rgb(13, 17, 23)')
      await page.screenshot({ path: join(SHOTS, 'report-run-dark.png'), fullPage: true })
      await page.emulateMedia({ media: 'print', colorScheme: 'dark' })
      expect(await background()).toBe('rgb(255, 255, 255)')
      const pdf = await page.pdf({ path: join(SHOTS, 'report-run.pdf'), format: 'A4' })
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
      await page.close()
    },
    SLOW,
  )

  it(
    'marks the findings that came back after a reply as recurring, pointing at the earlier one',
    async () => {
      const [capped] = await runsBC()
      const doc = expectOk(await capped.sb.cli(['report', '--run', capped.runId]))
      const { page } = await openReport(doc.path)
      expect(await texts(page, '#round-2 .finding-id')).toEqual(['2.1', '2.2'])
      expect(
        await page
          .locator('#round-2 .recurring')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-recurring-of'))),
      ).toEqual(['1.1', '1.2'])
      expect(await page.locator('#round-2 .recurring a').first().getAttribute('href')).toBe('#finding-1-1')
      expect(await page.locator('#round-1 .recurring').count()).toBe(0)
      await page.close()
    },
    SLOW,
  )

  it(
    'shows hostile agent text as text: no script runs, no element is made from it',
    async () => {
      const [, hostile] = await runsBC()
      const doc = expectOk(await hostile.sb.cli(['report', '--run', hostile.runId]))
      const { page, requests } = await openReport(doc.path)
      expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined()
      expect(await page.locator('script, iframe, img, b').count()).toBe(0)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(HOSTILE_TASK)
      expect(await page.locator('.finding-text').textContent()).toBe(
        `<script>window.__pwned = 'finding'</script><b>bold?</b> & "quotes"`,
      )
      expect(await page.locator('.reply-body').textContent()).toBe('</div><script>window.__pwned = "reply"</script>')
      expect(requests).toEqual([`file://${doc.path}`])
      await page.close()
    },
    SLOW,
  )

  it(
    'shows every run with --all: rounds to approval, approval rate, dollars per approved run, each cost budget-check’s',
    async () => {
      const a = await runA()
      const [b, c] = await runsBC()
      const doc = expectOk(await shared.cli(['report', '--all']))
      expect(doc.path).toBe(join(shared.home, 'reports', 'all.html'))
      expect([...doc.runs].sort()).toEqual([a.runId, b.runId, c.runId].sort())
      const { page, requests } = await openReport(doc.path)

      const rows = page.locator('tbody tr[data-run]')
      expect(await rows.count()).toBe(3)
      const row = (loop: Loop) => page.locator(`tr[data-run="${loop.runId}"]`)
      // rounds, and rounds to approval: A approved in round 2, B capped, C abandoned
      for (const [loop, rounds, toApproval] of [
        [a, '2', '2'],
        [b, '2', '—'],
        [c, '1', '—'],
      ] as const) {
        const cells = await row(loop).locator('td').allTextContents()
        expect(cells[2], loop.runId).toBe(rounds)
        expect(cells[3], loop.runId).toBe(toApproval)
        expect(await usdOf(page, `tr[data-run="${loop.runId}"] [data-cost="spent"]`)).toBe(loop.budget.spent)
      }
      expect(await row(c).locator('.task-cell').textContent()).toBe(HOSTILE_TASK)
      expect(await page.locator('script, img').count()).toBe(0)

      // by hand: 3 ended runs, 1 approved; every ended run's dollars over that one approval; no merged PR yet
      const total = a.budget.spent + b.budget.spent + c.budget.spent
      expect(total).toBeCloseTo(0.45, 12)
      const figure = (key: string) =>
        page.locator(`[data-figure="${key}"] dd`).evaluate((dd) => dd.firstChild?.textContent)
      expect(await figure('runs')).toBe('3')
      expect(await figure('approval-rate')).toBe('33%')
      expect(await figure('rounds-to-approval')).toBe('2.0')
      expect(await figure('usd-per-approved')).toBe('$0.4500')
      expect(await figure('usd-per-merged')).toBe('—')
      expect(await page.getByRole('img', { name: 'Cost per run and role' }).isVisible()).toBe(true)
      expect(await page.getByRole('table', { name: 'Every run, newest first' }).isVisible()).toBe(true)

      expect(requests).toEqual([`file://${doc.path}`])
      await page.screenshot({ path: join(SHOTS, 'report-all.png'), fullPage: true })
      expect(statSync(join(SHOTS, 'report-all.png')).size).toBeGreaterThan(10_000)
      await page.close()
    },
    SLOW,
  )

  it('leaves no browser process running once the browser is closed', async () => {
    expect(seenBrowserPids.size).toBeGreaterThan(0)
    await browser?.close()
    browser = undefined
    for (const pid of seenBrowserPids) expect(await goneWithin(pid, 5_000), `chromium pid ${pid}`).toBe(true)
  })
})
