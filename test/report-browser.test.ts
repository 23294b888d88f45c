// `pair-loop report` opened in a real browser (Debian's Chromium, driven by playwright-core) at 1280 and 400 pixels:
// real loops with the stub reviewers (test/_report-loops.ts), their pages read back from the DOM (rounds with their
// cost, time and diff, findings, replies, recurrences, totals equal to budget-check's own figures, what was not
// measured said so), dark and print styles, nothing loaded but the file, no agent text run as markup; `--all` over
// three runs linking each page; at 400 px nothing wider than the screen, tables reflowed or scrolling with their first
// column kept, chart labels readable. Screenshots go to the test's own temp folder; the README's four (report-run,
// report-all, report-phone, report-waiting) go to PAIR_LOOP_SCREENSHOTS when it is set, which is how .github/ is re-taken:
// PAIR_LOOP_SCREENSHOTS=.github npx vitest run test/report-browser.test.ts
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { browserAvailable, chromiumDescendants, launchChromium } from './_browser.ts'
import { expectOk } from './_expect.ts'
import { tempDir } from './_helpers.ts'
import { goneWithin } from './_review.ts'
import { HOSTILE_TASK, type Loop, REPLIES, runA, runsBC, STUB_FINDINGS, shared, TASK } from './_report-loops.ts'

const SLOW = 120_000
const SHOTS = tempDir('report-shots-')
const README_SHOTS = process.env.PAIR_LOOP_SCREENSHOTS ? resolve(process.env.PAIR_LOOP_SCREENSHOTS) : SHOTS
const FOR_README = new Set(['report-run.png', 'report-all.png', 'report-phone.png', 'report-waiting.png'])
const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 400, height: 860 }

let browser: Browser | undefined
const seenBrowserPids = new Set<number>()
async function openReport(
  path: string,
  viewport = DESKTOP,
  colorScheme: 'light' | 'dark' = 'light',
): Promise<{ page: Page; requests: string[] }> {
  browser ??= await launchChromium()
  const page = await browser.newPage({ viewport, colorScheme })
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
const shotPath = (name: string) => join(FOR_README.has(name) ? README_SHOTS : SHOTS, name)
const shot = async (page: Page, name: string) => {
  await page.screenshot({ path: shotPath(name), fullPage: true })
  expect(statSync(shotPath(name)).size).toBeGreaterThan(10_000)
}
/** How far the page reaches past the viewport's right edge (0: nothing wider than the screen). */
const overflow = (page: Page) =>
  page.evaluate<number>('document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth')
/** The rendered height of an SVG text, in CSS pixels. */
const textHeight = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el) => el.getBoundingClientRect().height)

describe.skipIf(!browserAvailable)('pair-loop report in Chromium', () => {
  it(
    'shows a two-round run: both rounds with their cost, time and diff, the findings with their replies, and totals equal to budget-check',
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

      // each round's line: its cost (the stub reviewer reports none: not measured), its coding time, its diff
      const meta = await texts(page, '.round-meta')
      expect(meta[0]).toMatch(/^at least \$0\.2500 \(coder \$0\.2500, reviewer not measured\) · coding \d/)
      expect(meta[0]).toContain('review ')
      expect(meta[0]).toContain('1 file changed, +1 −0')
      expect(meta[1]).toMatch(/^at least \$0\.1500 \(coder \$0\.1500, reviewer not measured\)/)

      // the totals: budget-check's own figures, exactly, and the rounded ones a person reads
      expect(budget.spent).toBeCloseTo(0.4, 12) // $0.25 then $0.15, as spent above
      expect(await usdOf(page, 'tfoot [data-cost="total"]')).toBe(budget.spent)
      expect(await usdOf(page, 'tfoot [data-cost="coder-total"]')).toBe(budget.by_role.coder.usd)
      expect(await usdOf(page, 'tfoot [data-cost="reviewer-total"]')).toBe(budget.by_role.reviewer.usd)
      expect(await page.locator('tfoot [data-cost="total"]').textContent()).toBe('at least $0.4000')
      expect(await page.locator('tfoot [data-cost="reviewer-total"]').textContent()).toBe('not measured')
      expect(await page.locator('dd [data-cost="spent"]').textContent()).toBe(
        'at least $0.4000 (reviewer not measured)',
      )
      for (const round of budget.rounds) {
        expect(await usdOf(page, `tr[data-round="${round.n}"] [data-cost="coder"]`)).toBe(round.coder.usd)
        expect(await usdOf(page, `tr[data-round="${round.n}"] [data-cost="reviewer"]`)).toBe(round.reviewer.usd)
      }
      expect(await texts(page, 'tbody [data-cost="coder"]')).toEqual(['$0.2500', '$0.1500'])
      expect(await texts(page, 'tbody [data-cost="reviewer"]')).toEqual(['not measured', 'not measured'])

      // the chart: an image with a name and a description, its bars and the budget line (40% of it spent: in view)
      const chart = page.getByRole('img', { name: 'Cost per round and role' })
      expect(await chart.isVisible()).toBe(true)
      expect(await chart.locator('desc').textContent()).toContain('The budget is $1.0000.')
      expect(await chart.locator('.round-bars').count()).toBe(2)
      expect(await chart.locator('line.budget-line').count()).toBe(1)
      expect(await page.getByRole('table', { name: 'Cost per round and role' }).isVisible()).toBe(true)
      expect(await page.locator('.banner').count()).toBe(0) // approved and finished: nothing waits for the person

      expect(requests).toEqual([`file://${doc.path}`])
      await shot(page, 'report-run.png')
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
      await shot(page, 'report-run-dark.png')
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
    'puts a banner on a run that waits for the person: why, and the command for each answer',
    async () => {
      const [capped] = await runsBC()
      const { page } = await openReport(capped.waitingPage!)
      const banner = page.getByRole('note', { name: 'This run needs your decision' })
      expect(await banner.isVisible()).toBe(true)
      expect(await banner.getAttribute('data-ask')).toBe('round_cap')
      expect(await banner.textContent()).toContain('the round cap was reached without an approval')
      expect(await texts(page, '.banner li code')).toEqual([
        'pair-loop coder-done --over-cap --summary-file -',
        'pair-loop finish --verdict CHANGES_REQUESTED',
        'pair-loop finish --verdict ABANDONED',
      ])
      // above the rounds: the first thing after the title and the run's facts
      const [bannerTop, roundsTop] = await Promise.all([
        banner.evaluate((el) => el.getBoundingClientRect().top),
        page.locator('#rounds-heading').evaluate((el) => el.getBoundingClientRect().top),
      ])
      expect(bannerTop).toBeLessThan(roundsTop)
      // round 2's coder wrote no transcript: its empty bar is marked "at least", never read as a measured $0
      expect(await page.locator('g.round-bars[data-round="2"] text.unmeasured-mark').isVisible()).toBe(true)
      await shot(page, 'report-waiting.png')
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
    'shows every run with --all: rounds to approval, approval rate, dollars per approved run, each cost budget-check’s, each run linked',
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
      const cell = (loop: Loop, label: string) => row(loop).locator(`td[data-label="${label}"]`).textContent()
      // rounds, and rounds to approval: A approved in round 2, B capped, C abandoned
      for (const [loop, rounds, toApproval] of [
        [a, '2', '2'],
        [b, '2', '—'],
        [c, '1', '—'],
      ] as const) {
        expect(await cell(loop, 'Rounds'), loop.runId).toBe(rounds)
        expect(await cell(loop, 'To approval'), loop.runId).toBe(toApproval)
        expect(await cell(loop, 'Repository'), loop.runId).toBe('repo')
        expect(await cell(loop, 'Started'), loop.runId).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/)
        expect(await usdOf(page, `tr[data-run="${loop.runId}"] [data-cost="spent"]`)).toBe(loop.budget.spent)
      }
      expect(await row(c).locator('.task-cell').textContent()).toBe(HOSTILE_TASK)
      expect(await page.locator('script, img').count()).toBe(0)

      // by hand: 3 ended runs, 1 approved; every ended run's dollars over that one approval; no merged PR yet; the stub
      // reviewers report no cost and run C's coder wrote no transcript, so no run is fully measured
      const total = a.budget.spent + b.budget.spent + c.budget.spent
      expect(total).toBeCloseTo(0.45, 12)
      const figure = (key: string) =>
        page.locator(`[data-figure="${key}"] dd`).evaluate((dd) => dd.firstChild?.textContent)
      const note = (key: string) => page.locator(`[data-figure="${key}"] dd small`).textContent()
      expect(await figure('runs')).toBe('3')
      expect(await figure('approval-rate')).toBe('33%')
      expect(await figure('rounds-to-approval')).toBe('2.0')
      expect(await figure('usd-per-approved')).toBe('at least $0.4500') // over runs not fully measured
      expect(await figure('usd-per-merged')).toBe('—')
      expect(await figure('spent')).toBe('at least $0.4500')
      expect(await note('spent')).toBe('3 runs not fully measured')
      const trend = page.getByRole('img', { name: 'Cost and rounds per run, oldest first' })
      expect(await trend.isVisible()).toBe(true)
      expect(await trend.locator('g[data-run]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-run')))).toEqual(
        [a.runId, b.runId, c.runId],
      )
      // no run fully measured (above): each is marked "at least" on the trend, C's empty slot too; runs of one day
      // are told apart by their time
      expect(await trend.locator('text.unmeasured-mark').count()).toBe(3)
      expect(await trend.locator(`g[data-run="${c.runId}"] text.unmeasured-mark`).isVisible()).toBe(true)
      const dates = await texts(page, '.chart.trend text.date-label')
      expect(new Set(dates).size, dates.join(' ')).toBe(3)
      expect(await page.getByRole('table', { name: 'Every run, newest first' }).isVisible()).toBe(true)
      // at 1280 pixels the whole table is on the screen, nothing behind a sideways scroll
      const beyond = await page.locator('.table-scroll').evaluate((el) => el.scrollWidth - el.clientWidth)
      expect(beyond).toBeLessThanOrEqual(1) // a collapsed border's rounding pixel at most
      expect(requests).toEqual([`file://${doc.path}`])
      await shot(page, 'report-all.png')

      // each run's page was written beside it and is one click away
      await row(a).getByRole('link').click()
      await page.waitForURL(`file://${join(shared.home, 'reports', `${a.runId}.html`)}`)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(TASK)
      await page.close()
    },
    SLOW,
  )
})

describe.skipIf(!browserAvailable)('pair-loop report on a 400-pixel phone', () => {
  for (const scheme of ['light', 'dark'] as const)
    it(
      `fits a run's page to the screen (${scheme}): the cost table reflowed, every figure in view, labels readable`,
      async () => {
        const { sb, runId } = await runA()
        const path = join(sb.home, 'reports', `${runId}.html`)
        if (!existsSync(path)) expectOk(await sb.cli(['report']))
        const { page } = await openReport(path, PHONE, scheme)
        expect(await overflow(page)).toBeLessThanOrEqual(0)
        // the cost table reflows: one block a round, every figure on the screen with its column's name beside it
        const cells = page.locator('.cost-table td[data-label]')
        expect(await cells.count()).toBe(2 * 4 + 4)
        for (const box of await cells.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON())))
          expect(box.right).toBeLessThanOrEqual(400)
        const running = await page
          .locator('tr[data-round="2"] td[data-cost="running"]')
          .evaluate((el) => [
            el.ownerDocument.defaultView!.getComputedStyle(el, '::before').content,
            el.textContent,
            el.getBoundingClientRect().width,
          ])
        expect(running.slice(0, 2)).toEqual(['"Running total"', 'at least $0.4000'])
        expect(running[2]).toBeGreaterThan(200)
        expect(await textHeight(page, '.chart svg text.round-label')).toBeGreaterThanOrEqual(10)
        expect(await textHeight(page, '.chart svg text')).toBeGreaterThanOrEqual(10)
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor')
        expect(background).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)')
        await shot(page, `report-run-phone-${scheme}.png`)
        if (scheme === 'dark') {
          // the README's phone shot: the cost section, its chart and its table reflowed
          await page
            .locator('section[aria-labelledby="cost-heading"]')
            .screenshot({ path: shotPath('report-phone.png') })
          expect(statSync(shotPath('report-phone.png')).size).toBeGreaterThan(10_000)
        }
        await page.close()
      },
      SLOW,
    )

  it(
    'reflows the table of every run: whole task names, rounds, cost and PR on the screen',
    async () => {
      await runsBC()
      const doc = expectOk(await shared.cli(['report', '--all']))
      const { page } = await openReport(doc.path, PHONE, 'dark')
      expect(await overflow(page)).toBeLessThanOrEqual(0)
      for (const label of ['Task', 'Rounds', 'Cost', 'PR'])
        for (const box of await page
          .locator(`td[data-label="${label}"]`)
          .evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON()))) {
          expect(box.right, label).toBeLessThanOrEqual(400)
          expect(box.left, label).toBeGreaterThanOrEqual(0)
        }
      // a task name gets a line's width, never a column a few letters wide
      const widths = await page
        .locator('td.task-cell')
        .evaluateAll((els) => els.map((el) => el.getBoundingClientRect().width))
      for (const width of widths) expect(width).toBeGreaterThan(250)
      expect(await textHeight(page, '.chart.trend svg text')).toBeGreaterThanOrEqual(10)
      // the trend's "at least" marks clear its title, however large the phone's labels are
      const title = await page
        .locator('.chart.trend text.axis-title')
        .first()
        .evaluate((el) => el.getBoundingClientRect().bottom)
      for (const top of await page
        .locator('.chart.trend text.unmeasured-mark')
        .evaluateAll((els) => els.map((el) => el.getBoundingClientRect().top)))
        expect(top).toBeGreaterThanOrEqual(title)
      await shot(page, 'report-all-phone-dark.png')
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
