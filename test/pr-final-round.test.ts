// The final round, whole (issue 20, item 13), through the fake GitHub: a final round (`review --pr`) that asks for
// changes opens a coder round like any review's (its findings, inline or only in the review's body, answered with
// `reply`, the fix handed over); its own inline comments on the PR are pair-loop's, never threads to answer.
import { chmodSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { computeLedger } from '../lib/cost/ledger.ts'
import { tempDir } from './_helpers.ts'
import { expectOk } from './_expect.ts'
import { comment, ME, prSandbox, world } from './_pr.ts'

const DIFF = [
  'diff --git a/src/a.ts b/src/a.ts',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,2 +1,3 @@',
  ' export const a = 1',
  '+export const b = a + 1',
  ' export const c = 3',
  '',
].join('\n')
const CONFIG = { pair_loop: { pr_final_round: true } }

/** A reviewer naming one finding on a diff line and two that only the review's body can carry. */
function reviewer(verdict: 'CHANGES_REQUESTED' | 'APPROVED' = 'CHANGES_REQUESTED'): string {
  const script = join(tempDir('pl-final-'), 'review.sh')
  writeFileSync(
    script,
    `cat >/dev/null\nprintf '%s\\n' 'Mostly fine.' '1. [bug/major] src/a.ts:2 — b should be a + 2' '2. [docs] README.md:40 — mention b' '3. [style] — name things better' 'VERDICT: ${verdict}'\n`,
  )
  return JSON.stringify(['sh', script])
}

async function finalRoundAskingForChanges() {
  const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7, { verdict: 'CHANGES_REQUESTED' })
  const reviewed = expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer()]))
  return { sb, reviewed }
}

describe('a final round that asks for changes opens a coder round', () => {
  it('goes on the run as its next round, the run back in coding, and its findings are answered with reply', async () => {
    const { sb, reviewed } = await finalRoundAskingForChanges()
    expect(reviewed).toMatchObject({ round: 'pr', verdict: 'CHANGES_REQUESTED', phase: 'coding', next: 'pr-reply' })
    const state = sb.state(sb.runId)
    expect(state).toMatchObject({ phase: 'coding', outcome: null })
    expect(state.rounds.at(-1)!.reviewer!.findings.map((f) => f.id)).toEqual(['1.1', '1.2', '1.3'])

    const status = expectOk(await sb.cli(['status']))
    expect(status.next).toBe('reply')
    for (const id of ['1.1', '1.2', '1.3'])
      expectOk(
        await sb.cli(['reply', '--finding', id, '--disposition', 'fixed', '--body-file', '-'], { input: 'Done.' }),
      )
    expect(expectOk(await sb.cli(['status'])).next).toBe('coder-done')
  })

  it('tracks the findings only the review body carries as open findings of the run, as the inline one', async () => {
    const { sb } = await finalRoundAskingForChanges()
    const posted = expectOk(await sb.cli(['pr-reply', '--review-findings']))
    expect(posted).toMatchObject({ inline: 1, in_body: 2, next: 'reply' })
    const open = expectOk(await sb.cli(['status'])).open_findings.map((f: { id: string }) => f.id)
    expect(open).toEqual(['1.1', '1.2', '1.3'])
  })

  it('counts its reviewer call once, in its round', async () => {
    const { sb } = await finalRoundAskingForChanges()
    const state = sb.state(sb.runId)
    expect(state.final_review!.review.at).toBe(state.rounds.at(-1)!.reviewer!.at) // the one review, in both places
    const ledger = computeLedger(state, { env: sb.env, pricing: {}, cache: false })
    expect(ledger.by_role.reviewer.calls).toBe(1)
  })

  it('an approving final round leaves the run finished and the PR watched', async () => {
    const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7, { verdict: 'CHANGES_REQUESTED' })
    const reviewed = expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', reviewer('APPROVED')]))
    expect(reviewed).toMatchObject({ phase: 'finished', next: 'pr-reply' })
    expect(sb.state(sb.runId)).toMatchObject({ phase: 'finished', rounds: [] })
    expect(expectOk(await sb.cli(['status'])).next).toBe('pr-check')
  })
})

describe("the final round's own inline comments", () => {
  it('are never listed as threads to answer or resolve, and do not hold the PR back', async () => {
    const { sb } = await finalRoundAskingForChanges()
    expectOk(await sb.cli(['pr-reply', '--review-findings']))
    const ours = sb.read().threads[0]!
    const tick = expectOk(await sb.cli(['pr-check']))
    expect(tick.threads).toMatchObject({ unresolved: 0, actionable: [], stale_unresolved: [] })
    expect(tick.threads.own_final_round).toEqual([ours.id])
  })

  it('become a thread to answer once a person replies in one', async () => {
    const { sb } = await finalRoundAskingForChanges()
    expectOk(await sb.cli(['pr-reply', '--review-findings']))
    sb.change((w) => {
      w.threads[0]!.comments.push({ ...comment(9001, 'alice', 'Is a + 2 right? I think a + 1 was meant.', 90) })
    })
    const tick = expectOk(await sb.cli(['pr-check']))
    expect(tick.threads.actionable.map((t: { in_reply_to: number }) => t.in_reply_to)).toEqual([9001])
    expect(tick.threads.own_final_round).toEqual([])
    expect(sb.read().threads[0]!.comments[0]!.author).toBe(ME)
  })
})

// issue 34, the live tree: the final round's reviewer is pointed at its own read-only copy, never the working tree the
// coder writes while it runs. Each reviewer below rewrites the live file first, as the coder would once it is up (the
// positive control: a reviewer reading the repository would read that rewrite), then reads the file where it was told.
describe("the final round's reviewer reads its own copy", () => {
  const copyOf = (sb: { home: string; runId: string }) =>
    realpathSync(join(sb.home, 'runs', sb.runId, 'reviewed-snapshot'))

  it('a custom reviewer runs in the copy of the approved tree and reads its bytes while the live file is rewritten', async () => {
    const out = tempDir('pl-final-seen-')
    const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7)
    const script = join(out, 'review.sh')
    writeFileSync(
      script,
      [
        `cat > '${out}/prompt'`,
        `pwd -P > '${out}/cwd'`,
        `printf 'rewritten by the coder\\n' > '${sb.repo}/change.txt'`,
        `cat change.txt > '${out}/seen'`,
        `echo 'VERDICT: APPROVED'`,
        '',
      ].join('\n'),
    )
    expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', JSON.stringify(['sh', script])]))
    expect(readFileSync(join(sb.repo, 'change.txt'), 'utf8')).toBe('rewritten by the coder\n') // the live file moved
    expect(readFileSync(join(out, 'cwd'), 'utf8').trim()).toBe(copyOf(sb))
    expect(readFileSync(join(out, 'seen'), 'utf8')).toBe('a small change\n') // the approved bytes
    const tree = sb.state(sb.runId).approved_trees!.at(-1)!.tree
    expect(readFileSync(join(out, 'prompt'), 'utf8')).toContain(
      `read-only copy of the tree the loop approved (${tree.slice(0, 12)}: the PR head must be it) at ${copyOf(sb)} (`,
    )
  })

  it("claude's --add-dir names the copy, its cwd is outside the repository, and a Read there gets the approved bytes", async () => {
    const out = tempDir('pl-final-claude-')
    const bin = join(out, 'claude')
    // claude is the person's reviewer (a missing codex no longer falls back to the coder's own vendor)
    const person = { pr_final_round: true, claude_bin: bin, reviewer: 'claude', coder: 'codex' }
    const sb = await prSandbox(world({ diff: DIFF }), { pair_loop: person }, 7)
    writeFileSync(bin, fakeClaude(out, sb.repo))
    chmodSync(bin, 0o755)
    expectOk(await sb.cli(['review', '--pr']))
    const call = JSON.parse(readFileSync(join(out, 'call.json'), 'utf8'))
    expect(call.args[call.args.indexOf('--add-dir') + 1]).toBe(join(sb.home, 'runs', sb.runId, 'reviewed-snapshot'))
    expect(call.cwd).not.toContain(realpathSync(sb.repo))
    expect(call.args.join(' ')).not.toContain(sb.repo)
    expect(readFileSync(join(sb.repo, 'change.txt'), 'utf8')).toBe('rewritten by the coder\n') // the live file moved
    expect(call.seen).toBe('a small change\n')
  })

  it('gets an empty copy and is told to judge from the prompt when the working tree is not the approved tree', async () => {
    const out = tempDir('pl-final-empty-')
    const sb = await prSandbox(world({ diff: DIFF }), CONFIG, 7)
    writeFileSync(join(sb.repo, 'later.txt'), 'written after the approval\n') // not the approved tree now
    const script = join(out, 'review.sh')
    writeFileSync(
      script,
      [`cat > '${out}/prompt'`, `ls -A > '${out}/listing'`, `echo 'VERDICT: APPROVED'`, ''].join('\n'),
    )
    expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', JSON.stringify(['sh', script])]))
    expect(readFileSync(join(out, 'listing'), 'utf8')).toBe('')
    const prompt = readFileSync(join(out, 'prompt'), 'utf8')
    expect(prompt).not.toContain('read-only copy of')
    expect(prompt).toContain("Judge it from what this prompt shows; the repository is the coder's")
  })
})

/** A claude that lists --add-dir in its --help; called, it rewrites the live file, then reads it in --add-dir. */
function fakeClaude(out: string, repo: string): string {
  return `#!/usr/bin/env node
const fs = require('fs')
const args = process.argv.slice(2)
if (args[0] === '--help') {
  console.log('  --setting-sources <sources>\\n  --add-dir <directories...>')
  process.exit(0)
}
fs.readFileSync(0, 'utf8')
fs.writeFileSync(${JSON.stringify(join(repo, 'change.txt'))}, 'rewritten by the coder\\n')
const dir = args[args.indexOf('--add-dir') + 1]
const seen = fs.readFileSync(dir + '/change.txt', 'utf8')
fs.writeFileSync(${JSON.stringify(join(out, 'call.json'))}, JSON.stringify({ args, cwd: process.cwd(), seen }))
console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'Fine.\\n\\nVERDICT: APPROVED',
  session_id: 'unnamed', total_cost_usd: 0.001, usage: { input_tokens: 10, output_tokens: 5 } }))
`
}
