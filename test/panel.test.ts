// The panel (issue 35, item 3; DESIGN "Panel"): the person's `pair_loop.reviewers` review each round at once, findings
// merged by key, the round decided by `approval`, each member's verdict, session, cost and failure its own, every
// member's call in the ledger and the brake, a failed member called again alone. Through `review` with fake vendor
// CLIs (each prints claude's JSON result with its own cost, and counts its calls), and the rules on their own.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { computeLedger } from '../lib/cost/ledger.ts'
import { renderPrBody } from '../lib/pr/body.ts'
import { renderHandoff } from '../lib/run/handoff.ts'
import { documentText } from '../lib/view/text-view.ts'
import { checkReviewersFlag } from '../lib/run/authority.ts'
import { DEFAULTS, keysNeedingTrust } from '../lib/run/config.ts'
import { mergeFindings, panelVerdict, parseApproval } from '../lib/review/panel.ts'
import { expectError, expectOk, runInReview, writeChange } from './_expect.ts'
import { sandbox, tempDir, writeTestHomeConfig } from './_helpers.ts'
import { SLOW, goneWithin, waitFor } from './_review.ts'

type Tool = 'claude' | 'codex' | 'gemini'
interface Fake {
  /** The text it answers (ends in its verdict line). */
  text: string
  /** The USD it reports per call (its `total_cost_usd`). */
  usd: number
  /** Calls that fail (exit 3, nothing on stdout) before it answers. */
  fails?: number
  /** It never answers (its pid in `<bin>.pid`). */
  hang?: boolean
}

const APPROVE = 'Looks right.\n\nVERDICT: APPROVED'
const CHANGES = '1. [bug/major] src/a.ts:3 — the loop never ends\n\nVERDICT: CHANGES_REQUESTED'

/** A vendor CLI that answers like `claude -p --output-format json`, counting its calls in `<bin>.calls`. */
function fakeVendor(dir: string, tool: Tool, fake: Fake): string {
  const bin = join(dir, tool)
  const calls = `${bin}.calls`
  writeFileSync(
    bin,
    `#!/usr/bin/env node
const fs = require('fs')
if (process.argv.includes('--help')) process.exit(0) // its flags asked (codex: exec --help): not a review
fs.readFileSync(0, 'utf8')
const n = (fs.existsSync(${JSON.stringify(calls)}) ? Number(fs.readFileSync(${JSON.stringify(calls)}, 'utf8')) : 0) + 1
fs.writeFileSync(${JSON.stringify(calls)}, String(n))
if (${Boolean(fake.hang)}) { fs.writeFileSync(${JSON.stringify(`${bin}.pid`)}, String(process.pid)); setInterval(() => {}, 1000) }
else if (n <= ${fake.fails ?? 0}) { process.stderr.write('${tool} crashed\\n'); process.exit(3) }
else console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: ${JSON.stringify(fake.text)},
  session_id: '${tool}-session-' + n, total_cost_usd: ${fake.usd} }))
`,
  )
  chmodSync(bin, 0o755)
  return bin
}

const callsOf = (bin: string): number => (existsSync(`${bin}.calls`) ? Number(readFileSync(`${bin}.calls`, 'utf8')) : 0)

/** A run in review whose person's panel is `fakes` (in that order) under `approval`, each a fake CLI. */
async function panelRun(
  fakes: Partial<Record<Tool, Fake>>,
  person: Record<string, unknown> = {},
  budget: Record<string, unknown> = {},
) {
  const sb = sandbox({ 'README.md': '# demo\n', 'src/a.ts': 'export const a = 1\n' })
  const dir = tempDir('pl-panel-')
  const bins = Object.fromEntries(
    Object.entries(fakes).map(([tool, fake]) => [tool, fakeVendor(dir, tool as Tool, fake!)]),
  ) as Record<Tool, string>
  writeTestHomeConfig(sb.home, {
    pair_loop: {
      ...Object.fromEntries(Object.entries(bins).map(([tool, bin]) => [`${tool}_bin`, bin])),
      reviewers: Object.keys(fakes),
      ...person,
    },
    budget,
  })
  const runId = await runInReview(sb, ['--coder', 'gemini', '--reviewer', 'claude'])
  return { sb, runId, bins, reviewer: () => sb.state(runId).rounds.at(-1)!.reviewer! }
}

describe('a panel round through review', () => {
  it(
    'is approved when both members approve, each with its own verdict, session and cost',
    async () => {
      const { sb, reviewer } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: APPROVE, usd: 0.002 },
      })
      const doc = expectOk(await sb.cli(['review']))
      expect(doc.verdict).toBe('APPROVED')
      expect(reviewer().panel).toMatchObject([
        { tool: 'claude', verdict: 'APPROVED', session_id: 'claude-session-1', cost: { usd: 0.001 }, calls: 1 },
        { tool: 'codex', verdict: 'APPROVED', session_id: 'codex-session-1', cost: { usd: 0.002 }, calls: 1 },
      ])
      // the single-reviewer fields stay meaningful: the first member's identity, the round's sums
      expect(reviewer()).toMatchObject({ tool: 'claude', session_id: 'claude-session-1', approval: 'all' })
      expect(reviewer().cost!.usd).toBeCloseTo(0.003, 10)
    },
    SLOW,
  )

  it.each([
    { approval: 'all', phase: 'coding', verdict: 'CHANGES_REQUESTED' },
    { approval: 'any', phase: 'approved', verdict: 'APPROVED' },
  ])(
    'one approving and one asking for changes under $approval leaves the run $phase',
    async ({ approval, phase, verdict }) => {
      const { sb, runId, reviewer } = await panelRun(
        { claude: { text: APPROVE, usd: 0.001 }, codex: { text: CHANGES, usd: 0.002 } },
        { approval },
      )
      expectOk(await sb.cli(['review']))
      expect(sb.state(runId).phase).toBe(phase)
      expect(reviewer().verdict).toBe(verdict)
      expect(reviewer().panel!.map((member) => member.verdict)).toEqual(['APPROVED', 'CHANGES_REQUESTED'])
      expect(reviewer().findings).toHaveLength(1) // the dissenter's finding is shown whatever the rule decided
    },
    SLOW,
  )

  it.each([
    { approval: 'quorum:2', phase: 'approved' },
    { approval: 'quorum:3', phase: 'coding' }, // the control: the same verdicts short of the quorum
  ])(
    'two of three approving under $approval leaves the run $phase',
    async ({ approval, phase }) => {
      const { sb, runId } = await panelRun(
        {
          claude: { text: APPROVE, usd: 0.001 },
          codex: { text: APPROVE, usd: 0.002 },
          gemini: { text: CHANGES, usd: 0.004 },
        },
        { approval },
      )
      expectOk(await sb.cli(['review']))
      expect(sb.state(runId).phase).toBe(phase)
    },
    SLOW,
  )

  it(
    'merges a finding both members raised into one, raised by both',
    async () => {
      const other =
        '1. [bug/minor] src/a.ts:9 — THE LOOP never ends!\n2. [style/nit] src/a.ts:1 — name it\n\nVERDICT: CHANGES_REQUESTED'
      const { sb, reviewer } = await panelRun({
        claude: { text: CHANGES, usd: 0.001 },
        codex: { text: other, usd: 0.002 },
      })
      expectOk(await sb.cli(['review']))
      expect(
        reviewer().findings.map((f) => ({ id: f.id, text: f.text, raised_by: f.raised_by, severity: f.severity })),
      ).toEqual([
        { id: '1.1', text: 'the loop never ends', raised_by: ['claude', 'codex'], severity: 'major' },
        { id: '1.2', text: 'name it', raised_by: ['codex'], severity: 'nit' },
      ])
      expect(reviewer().panel!.map((member) => member.findings_count)).toEqual([1, 2])
    },
    SLOW,
  )

  it(
    'calls a crashed member again alone: the other member is called once',
    async () => {
      const { sb, bins, reviewer } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: APPROVE, usd: 0.002, fails: 1 },
      })
      const doc = expectOk(await sb.cli(['review']))
      expect(doc.verdict).toBe('APPROVED')
      expect({ claude: callsOf(bins.claude), codex: callsOf(bins.codex) }).toEqual({ claude: 1, codex: 2 })
      expect(reviewer().panel![1]).toMatchObject({ tool: 'codex', verdict: 'APPROVED', calls: 2 })
    },
    SLOW,
  )

  it(
    'fails the round under all when a member fails twice, keeping every call it paid for; the run stays in review',
    async () => {
      const { sb, runId, bins } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: APPROVE, usd: 0.002, fails: 2 },
      })
      const result = await sb.cli(['review'])
      // not expectError: the worker's line about the retry is on stderr too
      const error = result.json.errors[0]
      expect(error.code).toBe('reviewer_failed')
      expect(error.message).toContain("the panel's codex reviewer failed twice")
      expect(result.stderr).toContain("the panel's codex reviewer failed (reviewer_failed); calling it again, alone")
      const state = sb.state(runId)
      expect(state.phase).toBe('reviewing')
      expect(callsOf(bins.claude)).toBe(1)
      expect(state.failed_reviews.map((f) => ({ tool: f.tool, usd: f.cost?.usd ?? null }))).toEqual([
        { tool: 'claude', usd: 0.001 },
        { tool: 'codex', usd: null },
      ])
    },
    SLOW,
  )

  it(
    'lets the others decide under any when a member fails twice, its failure recorded as its own',
    async () => {
      const { sb, runId, reviewer } = await panelRun(
        { claude: { text: APPROVE, usd: 0.001 }, codex: { text: APPROVE, usd: 0.002, fails: 2 } },
        { approval: 'any' },
      )
      expectOk(await sb.cli(['review']))
      expect(sb.state(runId).phase).toBe('approved')
      expect(reviewer().panel![1]).toMatchObject({
        tool: 'codex',
        verdict: null,
        calls: 2,
        failure: { code: 'reviewer_failed' },
      })
      // its calls are the ledger's, as a failed member's
      const ledger = computeLedger(sb.state(runId), { pricing: {}, env: sb.env, cache: false })
      expect(ledger.by_role.reviewer).toMatchObject({ calls: 3, failed_calls: 1 })
    },
    SLOW,
  )
})

describe('the severity gate over a panel', () => {
  it.each([
    { block_on: 'major', approved_by: 'severity_gate', phase: 'approved' },
    { block_on: 'nit', approved_by: undefined, phase: 'coding' }, // the control: the default gate blocks on it
  ])(
    'applies to the merged findings (block_on $block_on): a minor finding of one member leaves the run $phase',
    async ({ block_on, approved_by, phase }) => {
      const minor = '1. [style/minor] src/a.ts:2 — rename a\n\nVERDICT: CHANGES_REQUESTED'
      const { sb, runId, reviewer } = await panelRun(
        { claude: { text: APPROVE, usd: 0.001 }, codex: { text: minor, usd: 0.002 } },
        { block_on },
      )
      expectOk(await sb.cli(['review']))
      expect(sb.state(runId).phase).toBe(phase)
      expect(reviewer()).toMatchObject({ verdict: 'CHANGES_REQUESTED' })
      expect(reviewer().approved_by).toBe(approved_by)
    },
    SLOW,
  )
})

describe('cancelling a panel round', () => {
  it(
    "lists each member in flight, and review --cancel ends every member's call, each kept as its own cancelled attempt",
    async () => {
      // each member's call has its own relay: the watch's stop must reach all of them, not the last one started
      // (checked: with the relays' kill left out of lib/review/panel-round.ts, one member outlives the cancel)
      const { sb, runId, bins } = await panelRun({
        claude: { text: APPROVE, usd: 0.001, hang: true },
        codex: { text: APPROVE, usd: 0.002, hang: true },
      })
      expectOk(await sb.cli(['review', '--wait', '0', '--timeout', '100']))
      // its claim outlives a member's call and its retry alone, each with a re-ask: 4 × 100 s, plus the 60 s grace
      const claim = sb.state(runId).review_claim!
      expect(Date.parse(claim.expires_at!) - Date.parse(claim.started_at)).toBe(4 * 100_000 + 60_000)
      const pids = await waitFor(
        () =>
          existsSync(`${bins.claude}.pid`) && existsSync(`${bins.codex}.pid`)
            ? [bins.claude, bins.codex].map((bin) => Number(readFileSync(`${bin}.pid`, 'utf8')))
            : null,
        'both members running',
      )
      // the in-flight document lists each member's state
      const inFlight = expectOk(await sb.cli(['review', '--wait', '0']))
      expect(inFlight).toMatchObject({ in_progress: true })
      expect(inFlight.panel).toEqual([
        { tool: 'claude', state: 'running' },
        { tool: 'codex', state: 'running' },
      ])
      expect(expectOk(await sb.cli(['review', '--cancel']))).toMatchObject({ cancelled: true })
      for (const pid of pids) expect(await goneWithin(pid, 5_000), `member ${pid} still runs`).toBe(true)
      const state = sb.state(runId)
      expect(state.phase).toBe('reviewing')
      expect(state.failed_reviews.map((f) => [f.tool, f.code]).sort()).toEqual([
        ['claude', 'cancelled'],
        ['codex', 'cancelled'],
      ])
    },
    SLOW,
  )
})

describe('where a panel round is shown', () => {
  const said = 'Panel (approval: all): claude: APPROVED, $0.0010; codex: CHANGES_REQUESTED, $0.0020'

  it(
    "gives each member's verdict and cost in review's document, its --text, status, HANDOFF.md and the PR body",
    async () => {
      const { sb, runId } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: CHANGES, usd: 0.002 },
      })
      const doc = expectOk(await sb.cli(['review']))
      const members = [
        { tool: 'claude', verdict: 'APPROVED', cost_usd: 0.001 },
        { tool: 'codex', verdict: 'CHANGES_REQUESTED', cost_usd: 0.002 },
      ]
      expect(doc).toMatchObject({ verdict: 'CHANGES_REQUESTED', approval: 'all', panel: members })
      expect(doc.findings[0].raised_by).toEqual(['codex'])
      expect(expectOk(await sb.cli(['status']))).toMatchObject({ approval: 'all', panel: members })
      expect(documentText('review', doc)).toMatch(
        /panel\s+claude APPROVED \$0\.0010; codex CHANGES_REQUESTED \$0\.0020 \(approval: all\)/,
      )
      const state = sb.state(runId)
      expect(renderHandoff(state)).toContain(`${said}.`)
      expect(renderPrBody(state, null)).toContain(`**Round 1:** ${said}.`)
    },
    SLOW,
  )

  it('shows nothing of a panel for a round of one reviewer (the control)', async () => {
    const sb = sandbox({ 'README.md': '# demo\n' })
    writeTestHomeConfig(sb.home)
    const runId = await runInReview(sb)
    const doc = expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:approve']))
    expect(doc.panel).toBeUndefined()
    expect(renderHandoff(sb.state(runId))).not.toContain('Panel (approval')
  })
})

describe("a panel's cost", () => {
  it(
    'is every member’s call in the ledger, at each member’s own cost',
    async () => {
      const { sb, runId } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: APPROVE, usd: 0.002 },
      })
      expectOk(await sb.cli(['review']))
      const ledger = computeLedger(sb.state(runId), { pricing: {}, env: sb.env, cache: false })
      expect(ledger.by_role.reviewer.calls).toBe(2)
      expect(ledger.by_role.reviewer.usd).toBeCloseTo(0.003, 10)
      expect(ledger.sources.filter((s) => s.role === 'reviewer').map((s) => [s.kind, s.usd])).toEqual([
        ['claude', 0.001],
        ['codex', 0.002],
      ])
    },
    SLOW,
  )

  it.each([
    { limit: 1.0, refused: true }, // spent 0.6, the panel's estimate 0.6: past the limit
    { limit: 1.5, refused: false }, // the control: the same round when the limit covers it whole
  ])(
    'the brake refuses a panel round it cannot afford whole (limit $limit)',
    async ({ limit, refused }) => {
      const { sb, runId, bins } = await panelRun(
        { claude: { text: CHANGES, usd: 0.3 }, codex: { text: CHANGES, usd: 0.3 } },
        {},
        { per_run_usd: limit },
      )
      expectOk(await sb.cli(['review']))
      writeChange(sb, 'second.txt')
      expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
      // the single reviewer's brake lets the round open: what is spent (0.6) is under either limit
      expect(computeLedger(sb.state(runId), { pricing: {}, env: sb.env, cache: false }).spent_usd).toBeCloseTo(0.6, 10)
      const result = await sb.cli(['review'])
      if (refused) {
        const error = expectError(result, 'budget_exceeded')
        expect(error.message).toContain('cannot afford the panel whole')
        expect(error).toMatchObject({ estimate_usd: 0.6, panel: ['claude', 'codex'] })
        expect(callsOf(bins.claude)).toBe(1) // nobody was called
      } else {
        expectOk(result)
        expect(callsOf(bins.claude)).toBe(2)
      }
    },
    SLOW,
  )
})

describe('who chooses the panel', () => {
  it(
    'refuses --reviewer-cmd beside a panel; the same flag reviews alone without one (the control)',
    async () => {
      const { sb, bins } = await panelRun({
        claude: { text: APPROVE, usd: 0.001 },
        codex: { text: APPROVE, usd: 0.002 },
      })
      const refused = expectError(await sb.cli(['review', '--reviewer-cmd', 'builtin:approve']), 'usage')
      expect(refused).toMatchObject({ flag: '--reviewer-cmd', key: 'pair_loop.reviewers', panel: ['claude', 'codex'] })
      expect(callsOf(bins.claude) + callsOf(bins.codex)).toBe(0)
      const alone = await panelRun(
        { claude: { text: APPROVE, usd: 0.001 }, codex: { text: APPROVE, usd: 0.002 } },
        { reviewers: null },
      )
      expect(expectOk(await alone.sb.cli(['review', '--reviewer-cmd', 'builtin:approve']))).toMatchObject({
        verdict: 'APPROVED',
      })
    },
    SLOW,
  )

  it(
    'refuses --reviewers outside the person’s list, naming the key; the same list is taken when the person allows it',
    async () => {
      const { sb, bins } = await panelRun(
        { claude: { text: APPROVE, usd: 0.001 }, codex: { text: APPROVE, usd: 0.002 } },
        { reviewers: null },
      )
      const refused = expectError(await sb.cli(['review', '--reviewers', 'claude,codex']), 'usage')
      expect(refused).toMatchObject({ flag: '--reviewers', key: 'pair_loop.reviewers' })
      expect(callsOf(bins.codex)).toBe(0)
      // the control: a person whose panel lists both
      const allowed = await panelRun({ claude: { text: APPROVE, usd: 0.001 }, codex: { text: APPROVE, usd: 0.002 } })
      expectOk(await allowed.sb.cli(['review', '--reviewers', 'claude,codex']))
      expect(allowed.reviewer().panel!.map((member) => member.tool)).toEqual(['claude', 'codex'])
    },
    SLOW,
  )

  it.each([
    { value: 'codex,gemini', allowed: ['codex', 'gemini', 'claude'], taken: ['codex', 'gemini'] },
    { value: 'codex,gemini', allowed: ['codex', 'claude'], taken: null },
    { value: 'codex', allowed: ['codex', 'claude'], taken: null },
    { value: 'codex,codex', allowed: ['codex', 'claude'], taken: null },
  ])('--reviewers $value within $allowed is taken: $taken', ({ value, allowed, taken }) => {
    const config = { pair_loop: { ...DEFAULTS.pair_loop, reviewers: allowed as Tool[] } }
    if (taken) expect(checkReviewersFlag(value, config)).toEqual(taken)
    else expect(() => checkReviewersFlag(value, config)).toThrow(/pair_loop\.reviewers/)
  })

  it('needs trust for a repository config that sets the panel or its rule, not for one that sets neither', () => {
    const asked = { pair_loop: { reviewers: ['codex', 'gemini'], approval: 'any', max_rounds: 5 } } as never
    expect(keysNeedingTrust(asked, undefined, { tracked: true })).toEqual(['pair_loop.reviewers', 'pair_loop.approval'])
    expect(keysNeedingTrust({ pair_loop: { max_rounds: 5 } } as never, undefined, { tracked: true })).toEqual([])
  })
})

describe('the approval rule and the merge', () => {
  const members = (...verdicts: Array<'APPROVED' | 'CHANGES_REQUESTED' | null>) =>
    verdicts.map((verdict) => ({ verdict }))
  it.each([
    { rule: 'all', verdicts: members('APPROVED', 'APPROVED'), expected: 'APPROVED' },
    { rule: 'all', verdicts: members('APPROVED', 'CHANGES_REQUESTED'), expected: 'CHANGES_REQUESTED' },
    { rule: 'any', verdicts: members('CHANGES_REQUESTED', 'APPROVED'), expected: 'APPROVED' },
    { rule: 'any', verdicts: members('CHANGES_REQUESTED', null), expected: 'CHANGES_REQUESTED' },
    { rule: 'quorum:2', verdicts: members('APPROVED', null, 'APPROVED'), expected: 'APPROVED' },
    { rule: 'quorum:2', verdicts: members('APPROVED', null, 'CHANGES_REQUESTED'), expected: 'CHANGES_REQUESTED' },
  ])('$rule over $verdicts is $expected', ({ rule, verdicts, expected }) => {
    expect(panelVerdict(verdicts, parseApproval(rule))).toBe(expected)
  })

  it('keeps the most severe of the severities said for one finding', () => {
    const finding = { n: 1, category: 'bug', path: 'a.ts', line_start: 1, line_end: 1, text: 'x breaks' }
    const merged = mergeFindings([
      { tool: 'codex', findings: [{ ...finding, severity: 'nit' }] },
      { tool: 'gemini', findings: [{ ...finding, line_start: 7, severity: 'blocker' }] },
    ])
    expect(merged).toMatchObject([{ severity: 'blocker', raised_by: ['codex', 'gemini'] }])
  })
})
