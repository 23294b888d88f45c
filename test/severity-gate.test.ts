// The severity gate (issue 35 item 4, DESIGN "Severity gate"): `pair_loop.block_on` lets findings below it through to
// approval, said everywhere, never silently; the default `nit` is today's loop. Expected values are written by hand.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULTS, keysNeedingTrust } from '../lib/run/config.ts'
import type { ParsedFinding } from '../lib/run/grammar.ts'
import { approverOf, type Severity } from '../lib/run/severity-gate.ts'
import type { ReviewerRound, RunState } from '../lib/run/state.ts'
import { applyReview, type ReviewInput } from '../lib/run/transitions.ts'
import { recordFinalReview } from '../lib/pr/moves.ts'
import { reviewText } from '../lib/view/text-loop.ts'
import { expectError, expectOk, runInReview, type Sandbox } from './_expect.ts'
import { sandbox, tempDir, writeTestHomeConfig } from './_helpers.ts'
import { reviewArgs, SLOW } from './_review.ts'
import { runState } from './_state.ts'

const T1 = '2026-11-30T05:10:00.000Z'
const ME = 4242

// ---------------------------------------------------------------- the rule

describe("the gate's rule", () => {
  // block_on, the severities of a CHANGES_REQUESTED's findings, who approves it
  it.each<[Severity, Array<Severity | null>, 'severity_gate' | null]>([
    ['nit', ['nit'], null], // the default: nothing is below nit
    ['nit', ['minor', 'nit'], null],
    ['minor', ['nit'], 'severity_gate'],
    ['minor', ['nit', 'minor'], null],
    ['major', ['minor', 'nit'], 'severity_gate'],
    ['major', ['major'], null],
    ['major', ['nit', 'blocker'], null],
    ['blocker', ['major', 'minor', 'nit'], 'severity_gate'],
    ['blocker', ['blocker'], null],
    ['major', [null], null], // a finding of no stated severity blocks whatever the gate
    ['blocker', ['nit', null], null],
    ['blocker', [], null], // changes asked for with no finding: its reasons are prose, nothing to weigh
  ])('block_on %s, findings %j: approved by %s', (blockOn, severities, approver) => {
    const findings = severities.map((severity) => ({ severity }))
    expect(approverOf({ verdict: 'CHANGES_REQUESTED', findings }, blockOn)).toBe(approver)
  })

  it.each<Severity>(['blocker', 'major', 'minor', 'nit'])(
    'leaves an APPROVED with findings approved by the reviewer (block_on %s)',
    (blockOn) => {
      const findings = [{ severity: 'blocker' as const }, { severity: null }]
      expect(approverOf({ verdict: 'APPROVED', findings }, blockOn)).toBe('reviewer')
    },
  )
})

// ---------------------------------------------------------------- the move

const finding = (severity: Severity | null, n = 1): ParsedFinding => ({
  n,
  category: 'style',
  severity,
  path: 'a.ts',
  line_start: n,
  line_end: n,
  text: `finding ${n}`,
})

const reviewInput = (verdict: ReviewInput['verdict'], findings: ParsedFinding[]): ReviewInput => ({
  tool: 'codex',
  fallback_used: false,
  verdict,
  findings,
  summary: '',
  session_id: null,
  model: null,
  usage: null,
  cost: null,
  calls: 1,
  duration_ms: 1,
  raw_output_path: null,
  over_budget: false,
  at: T1,
  tree: 'b'.repeat(40),
})

/** A run with block_on frozen in its config (or none at all: a run from before configs froze), round 1 under review. */
function reviewing(blockOn: Severity | 'no config', over: Partial<RunState> = {}): RunState {
  const config =
    blockOn === 'no config'
      ? null
      : { ...structuredClone(DEFAULTS), pair_loop: { ...DEFAULTS.pair_loop, block_on: blockOn }, sources: [] }
  const coder = {
    summary: 'r1',
    session_id: null,
    diff: null,
    findings_addressed: null,
    over_cap: false,
    over_budget: false,
    started_at: T1,
    done_at: T1,
  }
  return runState({
    config,
    phase: 'reviewing',
    rounds: [{ n: 1, coder, reviewer: null }],
    review_claim: {
      pid: ME,
      host: 'h',
      started_at: T1,
      pid_start: null,
      expires_at: null,
      reviewer_pgid: null,
      reviewer_start: null,
    },
    ...over,
  })
}

describe('applyReview under the gate', () => {
  it('approves by rule a CHANGES_REQUESTED whose findings are all below the gate, the verdict kept as said', () => {
    const run = applyReview(reviewing('major'), {
      review: reviewInput('CHANGES_REQUESTED', [finding('minor', 1), finding('nit', 2)]),
      pid: ME,
    }).state!
    expect(run.phase).toBe('approved')
    expect(run.rounds[0]!.reviewer).toMatchObject({
      verdict: 'CHANGES_REQUESTED',
      approved_by: 'severity_gate',
      block_on: 'major',
    })
    // what may ship is the tree the gate approved, as for a reviewer's approval
    expect(run.approved_trees).toEqual([{ tree: 'b'.repeat(40), round: 1, reviewer: 'codex', at: T1 }])
  })

  it('is the positive control: the same review, without the gate (nit, or a run with no config), goes back to coding', () => {
    for (const blockOn of ['nit', 'no config'] as const) {
      const run = applyReview(reviewing(blockOn), {
        review: reviewInput('CHANGES_REQUESTED', [finding('minor', 1), finding('nit', 2)]),
        pid: ME,
      }).state!
      expect(run.phase).toBe('coding')
      expect(run.rounds[0]!.reviewer!.approved_by).toBeUndefined()
      expect(run.approved_trees).toBeUndefined()
    }
  })

  it('approves a gated last round instead of capping the run', () => {
    const over = { max_rounds: 1 }
    const findings = [finding('nit')]
    expect(
      applyReview(reviewing('nit', over), { review: reviewInput('CHANGES_REQUESTED', findings), pid: ME }).state!.phase,
    ).toBe('capped')
    expect(
      applyReview(reviewing('minor', over), { review: reviewInput('CHANGES_REQUESTED', findings), pid: ME }).state!
        .phase,
    ).toBe('approved')
  })

  it('records a reviewer approval as the reviewer’s, and never takes approved_by from its input', () => {
    const approved = applyReview(reviewing('major'), { review: reviewInput('APPROVED', [finding('blocker')]), pid: ME })
    expect(approved.state!.rounds[0]!.reviewer).toMatchObject({ verdict: 'APPROVED', approved_by: 'reviewer' })
    const forged = { ...reviewInput('CHANGES_REQUESTED', [finding('major')]), approved_by: 'severity_gate' as const }
    const run = applyReview(reviewing('major'), { review: forged, pid: ME }).state!
    expect(run.phase).toBe('coding')
    expect(run.rounds[0]!.reviewer!.approved_by).toBeUndefined()
  })
})

describe('the final round under the gate', () => {
  /** A finished, approved run with its PR open, and the final round's review of it. */
  const finished = (blockOn: Severity) => ({
    ...reviewing(blockOn),
    phase: 'finished' as const,
    review_claim: null,
    outcome: { verdict: 'APPROVED' as const, finished_at: T1 },
    pr: 7,
  })
  const finalReview = (severity: Severity): ReviewerRound => ({
    ...reviewInput('CHANGES_REQUESTED', []),
    findings: [{ ...finding(severity), id: '2.1', round: 2, key: 'k', recurring: false, recurring_of: null }],
  })
  const record = (run: RunState, review: ReviewerRound) =>
    recordFinalReview(run, { review, diff_path: null, claimKey: 'final-review', pid: ME, now: T1 }).state!

  it('opens no coder round when its findings are all below the gate, and reopens the run when one is not', () => {
    const gated = record(finished('major'), finalReview('minor'))
    expect(gated.phase).toBe('finished')
    expect(gated.final_review!.review).toMatchObject({ approved_by: 'severity_gate', block_on: 'major' })
    // the positive control: the same review past the default gate opens round 2
    const reopened = record(finished('nit'), finalReview('minor'))
    expect(reopened.phase).toBe('coding')
    expect(reopened.rounds).toHaveLength(2)
  })
})

// ---------------------------------------------------------------- trust and flags (the person decides)

describe('who may set the gate', () => {
  const tracked = { tracked: true }
  // the repository's block_on, the person's, whether it needs trust: only a higher gate lets more findings through
  it.each<[Severity, Severity | undefined, boolean]>([
    ['nit', undefined, false],
    ['minor', undefined, true],
    ['blocker', undefined, true],
    ['major', 'major', false],
    ['minor', 'major', false],
    ['nit', 'major', false],
    ['blocker', 'major', true],
  ])('a repository block_on %s over the person’s %s needs trust: %s', (asked, personal, needs) => {
    const own = personal === undefined ? undefined : { pair_loop: { block_on: personal } }
    const keys = keysNeedingTrust({ pair_loop: { block_on: asked } }, own, tracked)
    expect(keys.includes('pair_loop.block_on')).toBe(needs)
  })

  it(
    'refuses a committed .pair-loop.json that raises the gate until the person trusts it (then the run goes by it)',
    async () => {
      const sb = sandbox({ 'README.md': '# demo\n', '.pair-loop.json': '{"pair_loop": {"block_on": "major"}}\n' })
      const error = expectError(await sb.cli(['start', '--task', 't']), 'config_untrusted')
      expect(error.keys).toEqual(['pair_loop.block_on'])
      expect(error.message).toContain(
        'pair_loop.block_on, which would count a round as approved when every finding is below major (yours: nit, where every finding blocks)',
      )
      // the positive control: trusted, the same file is what the run goes by, so untrusted it would have loosened it
      expectOk(await sb.cli(['trust']))
      const started = expectOk(await sb.cli(['start', '--task', 't']))
      expect(sb.state(started.run_id).config!.pair_loop.block_on).toBe('major')
    },
    SLOW,
  )

  it(
    'lets a committed .pair-loop.json lower the gate without trust',
    async () => {
      const sb = sandbox({ 'README.md': '# demo\n', '.pair-loop.json': '{"pair_loop": {"block_on": "minor"}}\n' })
      writeTestHomeConfig(sb.home, { pair_loop: { block_on: 'major' } })
      const started = expectOk(await sb.cli(['start', '--task', 't']))
      expect(sb.state(started.run_id).config!.pair_loop.block_on).toBe('minor')
    },
    SLOW,
  )

  it(
    'refuses a --block-on above the person’s gate as usage naming the key, and takes one below it',
    async () => {
      const sb = sandbox()
      writeTestHomeConfig(sb.home, { pair_loop: { block_on: 'major' } })
      const refused = expectError(await sb.cli(['start', '--task', 't', '--block-on', 'blocker']), 'usage')
      expect(refused).toMatchObject({ flag: '--block-on', key: 'pair_loop.block_on', block_on: 'major' })
      expect(refused.message).toContain('pair_loop.block_on')
      const runId = await runInReview(sb, ['--block-on', 'nit'])
      expect(sb.state(runId).config!.pair_loop.block_on).toBe('nit')
      // the tighter gate is the one the round goes by: a nit blocks
      const doc = expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: NIT_ONLY } }))
      expect(doc).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply' })
    },
    SLOW,
  )
})

// ---------------------------------------------------------------- through the CLI, with the stub reviewers

const NIT_ONLY = '1. [style/nit] src/a.ts:1 — rename x to count'
const MINOR_AND_NIT = `1. [style/minor] src/a.ts:2 — split the long function\n${NIT_ONLY.replace('1.', '2.')}`

/** A run in review under the person's gate (none: the default), reviewed by the changes stub with `findings`. */
async function reviewedWith(blockOn: Severity | null, findings: string) {
  const sb = sandbox()
  if (blockOn) writeTestHomeConfig(sb.home, { pair_loop: { block_on: blockOn } })
  const runId = await runInReview(sb)
  const doc = expectOk(await sb.cli(reviewArgs('changes'), { env: { STUB_FINDINGS: findings } }))
  return { sb, runId, doc }
}

describe('review with the changes stub', () => {
  // block_on, the findings the stub prints, whether the round is approved by the gate
  it.each<[Severity, string, boolean]>([
    ['major', MINOR_AND_NIT, true],
    ['major', '1. [bug/major] src/a.ts:1 — off by one\n2. [style/nit] src/a.ts:2 — rename', false],
    ['minor', NIT_ONLY, true],
    ['minor', MINOR_AND_NIT, false],
    ['blocker', '1. [bug/major] src/a.ts:1 — off by one', true],
    ['blocker', '1. [security/critical] src/a.ts:1 — injection', false], // critical is read as blocker
    ['major', '1. [style/low] src/a.ts:1 — tidy', true], // low is read as nit
    ['major', '1. [tests] src/a.test.ts:1 — no test', false], // no severity stated: it blocks
    ['nit', NIT_ONLY, false],
  ])(
    'block_on %s, findings %j: approved by the gate %s',
    async (blockOn, findings, approved) => {
      const { sb, runId, doc } = await reviewedWith(blockOn, findings)
      expect(doc.verdict).toBe('CHANGES_REQUESTED')
      expect(doc.next).toBe(approved ? 'finish' : 'reply')
      expect(sb.state(runId).phase).toBe(approved ? 'approved' : 'coding')
      expect(sb.state(runId).rounds[0]!.reviewer!.approved_by).toBe(approved ? 'severity_gate' : undefined)
    },
    SLOW,
  )

  it(
    'keeps today’s loop by default: a CHANGES_REQUESTED with one nit is not approved, and its document has no gate',
    async () => {
      const { sb, runId, doc } = await reviewedWith(null, NIT_ONLY)
      expect(doc).toMatchObject({ verdict: 'CHANGES_REQUESTED', next: 'reply', rounds_left: 2 })
      expect(doc).not.toHaveProperty('approved_by')
      expect(doc).not.toHaveProperty('severity_gate')
      expect(sb.state(runId).config!.pair_loop.block_on).toBe('nit')
      expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).not.toContain('severity gate')
    },
    SLOW,
  )

  it(
    'leaves an APPROVED with findings approved, by the reviewer',
    async () => {
      const sb = sandbox()
      writeTestHomeConfig(sb.home, { pair_loop: { block_on: 'major' } })
      const runId = await runInReview(sb)
      const script = `cat > /dev/null; printf '%s\\n' '1. [bug/blocker] src/a.ts:1 — noted for later' 'VERDICT: APPROVED'`
      const doc = expectOk(await sb.cli(['review', '--reviewer-cmd', JSON.stringify(['sh', '-c', script])]))
      expect(doc).toMatchObject({ verdict: 'APPROVED', next: 'finish' })
      expect(doc).not.toHaveProperty('severity_gate')
      expect(sb.state(runId).rounds[0]!.reviewer!.approved_by).toBe('reviewer')
    },
    SLOW,
  )
})

describe('an approval by the gate is said wherever the round is shown', () => {
  const SAID = 'approved by the severity gate (block_on: major): 2 findings below it left open'

  it(
    'in the review document, status, HANDOFF.md and the PR body, its findings answerable',
    async () => {
      const { sb, runId, doc } = await reviewedWith('major', MINOR_AND_NIT)
      const gate = { round: 1, block_on: 'major', left_open: ['1.1', '1.2'], said: SAID }
      expect(doc).toMatchObject({ approved_by: 'severity_gate', severity_gate: gate })
      expect(reviewText(doc)).toContain(SAID) // --text
      expect(doc.findings.map((f: any) => [f.id, f.severity])).toEqual([
        ['1.1', 'minor'],
        ['1.2', 'nit'],
      ])
      const status = expectOk(await sb.cli(['status']))
      expect(status).toMatchObject({
        phase: 'approved',
        next: 'finish',
        approved_by: 'severity_gate',
        severity_gate: gate,
      })
      expect(status.open_findings.map((f: any) => f.id)).toEqual(['1.1', '1.2'])
      expect((await sb.cli(['status', '--text'])).stdout).toContain(SAID)
      expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toContain(
        'VERDICT: CHANGES_REQUESTED\nApproved by the severity gate (block_on: major): 2 findings below it left open (1.1, 1.2).',
      )
      // answerable as any finding, while the run stands approved
      expectOk(
        await sb.cli(['reply', '--finding', '1.2', '--disposition', 'wont-fix', '--body-file', '-'], {
          input: 'a name is a name',
        }),
      )
      const finished = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
      const body = readFileSync(finished.pr_body_path, 'utf8')
      expect(body).toContain(
        `**Round 1 was ${SAID}** (the reviewer asked for changes; every finding was below the gate):\n\n` +
          '- **1.1** [style/minor] `src/a.ts:2` — split the long function\n' +
          '- **1.2** [style/nit] `src/a.ts:1` — rename x to count _(answered: wont-fix)_\n',
      )
      expect(body).toContain('| 1 | CHANGES_REQUESTED (approved by the severity gate) | 2 | 1 |')
      expect(sb.state(runId).outcome!.verdict).toBe('APPROVED')
    },
    SLOW,
  )

  it(
    'reads a structured answer’s severities as the grammar’s',
    async () => {
      const sb = await fakeClaudeRun('major')
      const structured = (severity: string) => ({
        verdict: 'CHANGES_REQUESTED',
        summary: 'small things',
        findings: [{ category: 'style', severity, path: 'README.md', line_start: 1, line_end: 1, text: 'tidy' }],
      })
      const doc = expectOk(await sb.cli(['review'], { env: { FAKE_STRUCTURED: JSON.stringify(structured('medium')) } }))
      expect(doc).toMatchObject({ reviewer: { tool: 'claude', structured: true }, approved_by: 'severity_gate' })
      expect(doc.findings.map((f: any) => [f.severity, f.severity_said])).toEqual([['minor', 'medium']])
      // the positive control: a blocker in the same answer blocks
      const other = await fakeClaudeRun('major')
      const blocked = expectOk(
        await other.cli(['review'], { env: { FAKE_STRUCTURED: JSON.stringify(structured('blocker')) } }),
      )
      expect(blocked).toMatchObject({ reviewer: { structured: true }, verdict: 'CHANGES_REQUESTED', next: 'reply' })
      expect(blocked).not.toHaveProperty('approved_by')
    },
    SLOW,
  )
})

/** A fake `claude` that lists --json-schema in its help and answers with $FAKE_STRUCTURED as its structured output. */
const FAKE_CLAUDE = `#!/usr/bin/env node
const args = process.argv.slice(2)
if (args[0] === '--help') {
  console.log('  --json-schema <schema>\\n  --session-id <uuid>\\n  --setting-sources <sources>\\n  --add-dir <directories...>')
  process.exit(0)
}
require('fs').readFileSync(0)
const at = args.indexOf('--session-id')
console.log(JSON.stringify({
  type: 'result', subtype: 'success', is_error: false, result: 'see the structured answer',
  session_id: at >= 0 ? args[at + 1] : 'unnamed', total_cost_usd: 0.001,
  usage: { input_tokens: 10, output_tokens: 5 }, structured_output: JSON.parse(process.env.FAKE_STRUCTURED),
}))
`

/** A run in review by the fake claude (its path in the person's config, with the gate), coded by codex. */
async function fakeClaudeRun(blockOn: Severity): Promise<Sandbox> {
  const sb = sandbox()
  const bin = join(tempDir('pl-fake-claude-'), 'claude')
  writeFileSync(bin, FAKE_CLAUDE)
  chmodSync(bin, 0o755)
  writeTestHomeConfig(sb.home, {
    pair_loop: { claude_bin: bin, block_on: blockOn, reviewer_env: { FAKE_STRUCTURED: true } },
  })
  await runInReview(sb, ['--coder', 'codex', '--reviewer', 'claude'])
  return sb
}
