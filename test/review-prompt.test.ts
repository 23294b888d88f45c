import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { git, sandbox, tempDir, writeFiles, writeTestHomeConfig } from './_helpers.ts'
import { expectOk, startRun, type Sandbox } from './_expect.ts'
import { reviewArgs, SLOW } from './_review.ts'

/** Review with `stub`, keeping the prompt it was given; returns the review document and the prompt. */
async function reviewKeepingPrompt(
  sb: Sandbox,
  stub = 'approve',
  env: Record<string, string> = {},
): Promise<{ doc: any; prompt: string }> {
  const promptFile = join(tempDir('pl-prompt-'), 'prompt.txt')
  const doc = expectOk(await sb.cli(reviewArgs(stub), { env: { STUB_PROMPT_FILE: promptFile, ...env } }))
  return { doc, prompt: readFileSync(promptFile, 'utf8') }
}

/**
 * Round 2's prompt: src/a.ts and src/b.ts at the base, `first` written for round 1 (the changes stub asks for two
 * fixes, both answered), then `second` for round 2.
 */
async function secondRoundPrompt(first: Record<string, string>, second: Record<string, string>): Promise<string> {
  const sb = sandbox({ 'src/a.ts': 'export const a = 1\n', 'src/b.ts': 'export const b = 1\n' })
  await startRun(sb)
  writeFiles(sb.repo, first)
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  expectOk(await sb.cli(reviewArgs('changes')))
  for (const finding of ['1.1', '1.2'])
    expectOk(
      await sb.cli(['reply', '--finding', finding, '--disposition', 'fixed', '--body-file', '-'], { input: 'done' }),
    )
  writeFiles(sb.repo, second)
  expectOk(await sb.cli(['coder-done', '--summary', 'round two']))
  return (await reviewKeepingPrompt(sb)).prompt
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('review: the prompt', () => {
  it(
    'carries the task, the answer grammar and the diff with a new untracked file, never HANDOFF.md',
    async () => {
      const sb = sandbox({ 'README.md': '# demo\n', 'src/a.ts': 'export const a = 1\n' })
      await startRun(sb)
      writeFiles(sb.repo, {
        'src/a.ts': 'export const a = 2 // TRACKED-EDIT-4c1d\n',
        'src/new-file.ts': 'export const untracked = "UNTRACKED-7f3a"\n',
      })
      expectOk(await sb.cli(['coder-done', '--summary', 'changed a, added new-file']))
      const { prompt } = await reviewKeepingPrompt(sb)
      expect(prompt).toContain('demo task')
      expect(prompt).toContain('VERDICT: CHANGES_REQUESTED')
      expect(prompt).toContain('N. [category/severity] path:line')
      expect(prompt).toContain('+export const a = 2 // TRACKED-EDIT-4c1d')
      expect(prompt).toContain('diff --git a/src/new-file.ts b/src/new-file.ts')
      expect(prompt).toContain('+export const untracked = "UNTRACKED-7f3a"')
      expect(prompt).not.toContain('HANDOFF.md')
      expect(prompt).not.toContain('# Pair-Loop Handoff')
      expect(prompt).toContain('changed a, added new-file') // the coder's summary, in the conversation
    },
    SLOW,
  )

  it(
    "leaves the user's index byte-identical: .git/index hash and git diff --cached unchanged",
    async () => {
      const sb = sandbox({
        'README.md': '# demo\n',
        'src/a.ts': 'export const a = 1\n',
        'src/b.ts': 'export const b = 1\n',
      })
      await startRun(sb)
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 2 // STAGED-93be\n' })
      git(sb.repo, ['add', 'src/a.ts'])
      writeFiles(sb.repo, {
        'src/b.ts': 'export const b = 2 // UNSTAGED-2a7c\n',
        'notes/new.md': 'UNTRACKED-NOTE-b81f\n',
      })
      expectOk(await sb.cli(['coder-done', '--summary', 'staged, unstaged and untracked changes']))
      const index = join(sb.repo, '.git', 'index')
      const hashBefore = sha256(index)
      const cachedBefore = git(sb.repo, ['diff', '--cached'])
      expect(cachedBefore).toContain('STAGED-93be')
      const { prompt } = await reviewKeepingPrompt(sb)
      expect(sha256(index)).toBe(hashBefore)
      expect(git(sb.repo, ['diff', '--cached'])).toBe(cachedBefore)
      expect(git(sb.repo, ['status', '--porcelain'])).toBe('M  src/a.ts\n M src/b.ts\n?? notes/\n')
      for (const marker of ['STAGED-93be', 'UNSTAGED-2a7c', 'UNTRACKED-NOTE-b81f']) expect(prompt).toContain(marker)
    },
    SLOW,
  )

  it(
    'names a binary file without its content, as NOT REVIEWED with its blob id and size',
    async () => {
      const sb = sandbox()
      await startRun(sb)
      const binary = Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]),
        Buffer.from('BINARY-MARKER-91c2'),
        Buffer.from([0, 1, 2, 0xff]),
      ])
      mkdirSync(join(sb.repo, 'assets'))
      writeFileSync(join(sb.repo, 'assets', 'logo.bin'), binary)
      expectOk(await sb.cli(['coder-done', '--summary', 'added a logo']))
      const { prompt } = await reviewKeepingPrompt(sb)
      const oid = git(sb.repo, ['hash-object', '--no-filters', 'assets/logo.bin'], sb.env).trim()
      expect(prompt).toContain(` assets/logo.bin | added, binary: NOT REVIEWED (now ${oid}, 30 bytes)`) // 8 + 18 + 4
      expect(prompt).toContain('named only, marked NOT REVIEWED')
      expect(prompt).not.toContain('BINARY-MARKER-91c2')
      expect(prompt).not.toContain('\x00')
    },
    SLOW,
  )

  it(
    'caps the diff at max_diff_bytes, keeping the full stat and a visible truncation note',
    async () => {
      const sb = sandbox()
      writeTestHomeConfig(sb.home, { pair_loop: { max_diff_bytes: 200 } })
      await startRun(sb)
      const big = `${Array.from({ length: 50 }, (_, i) => `line ${i} of the big file LINE-MARKER-${i}`).join('\n')}\n`
      writeFiles(sb.repo, { 'big.txt': big, 'zz-later.txt': 'LATER-FILE-CONTENT-5e0a\n' })
      expectOk(await sb.cli(['coder-done', '--summary', 'two new files']))
      const { prompt } = await reviewKeepingPrompt(sb)
      expect(prompt).toMatch(/big\.txt\s+\|\s+50 \+/)
      expect(prompt).toMatch(/zz-later\.txt\s+\|\s+1 \+/)
      const note =
        /\[diff truncated: (\d+) of at least (\d+) bytes shown; the stat above lists every changed file/.exec(prompt)
      expect(note, 'a truncation note').not.toBeNull()
      expect(Number(note![1])).toBeLessThanOrEqual(200)
      expect(Number(note![2])).toBeGreaterThan(2_000)
      expect(prompt).not.toContain('LINE-MARKER-49')
      expect(prompt).not.toContain('LATER-FILE-CONTENT-5e0a')
    },
    SLOW,
  )

  it(
    "shows the reviewer round 1's findings and the coder's replies in round 2's prompt",
    async () => {
      const sb = sandbox()
      await startRun(sb)
      expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
      expectOk(await sb.cli(reviewArgs('changes')))
      expectOk(
        await sb.cli(['reply', '--finding', '1.1', '--disposition', 'wont-fix', '--body-file', '-'], {
          input: 'WONTFIX-BODY-5d1e: the bound is inclusive by design',
        }),
      )
      expectOk(
        await sb.cli(['reply', '--finding', '1.2', '--disposition', 'fixed', '--body-file', '-'], {
          input: 'FIXED-BODY-0c3b: added the empty-input test',
        }),
      )
      expectOk(await sb.cli(['coder-done', '--summary', 'round two summary']))
      const { prompt } = await reviewKeepingPrompt(sb)
      expect(prompt).toContain('round 2 of at most 3')
      expect(prompt).toContain('1. [bug/major] src/a.ts:3-5 — the loop bound is off by one')
      expect(prompt).toContain('reply (wont-fix): WONTFIX-BODY-5d1e: the bound is inclusive by design')
      expect(prompt).toContain('reply (fixed): FIXED-BODY-0c3b: added the empty-input test')
      expect(prompt).toContain('round two summary')
    },
    SLOW,
  )

  it(
    'round 2 leads with the change since the snapshot round 1 reviewed, then the conversation, then the whole change',
    async () => {
      const prompt = await secondRoundPrompt(
        { 'src/a.ts': 'export const a = 2 // ROUND-ONE-EDIT-31a7\n' },
        { 'src/b.ts': 'export const b = 2 // ROUND-TWO-EDIT-8e02\n' },
      )
      const at = (text: string) => prompt.indexOf(text)
      const delta = prompt.slice(at('## Since the last review'), at('## Conversation so far'))
      expect(at('## Since the last review')).toBeGreaterThan(0)
      expect(at('## Since the last review')).toBeLessThan(at('## Conversation so far'))
      expect(at('## Conversation so far')).toBeLessThan(at('## The whole change'))
      expect(delta).toContain('+export const b = 2 // ROUND-TWO-EDIT-8e02')
      expect(delta).not.toContain('ROUND-ONE-EDIT-31a7') // round 1 saw it: not in the delta
      // the whole change is still there, round 1's edit included
      expect(prompt.slice(at('## The whole change'))).toContain('+export const a = 2 // ROUND-ONE-EDIT-31a7')
    },
    SLOW,
  )

  it(
    'round 1 has no delta: the change and the conversation as before',
    async () => {
      const sb = sandbox({ 'src/a.ts': 'export const a = 1\n' })
      await startRun(sb)
      writeFiles(sb.repo, { 'src/a.ts': 'export const a = 2\n' })
      expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
      const { prompt } = await reviewKeepingPrompt(sb)
      expect(prompt).not.toContain('## Since the last review')
      expect(prompt.indexOf('## The change')).toBeLessThan(prompt.indexOf('## Conversation so far'))
    },
    SLOW,
  )

  it(
    'round 2 says a file put back as the base has it is not deleted, though the delta of changed files drops it',
    async () => {
      const prompt = await secondRoundPrompt(
        { 'src/a.ts': 'export const a = 2\n' },
        { 'src/a.ts': 'export const a = 1\n', 'src/b.ts': 'export const b = 2\n' }, // a reverted
      )
      const delta = prompt.slice(prompt.indexOf('## Since the last review'), prompt.indexOf('## Conversation so far'))
      expect(delta).toContain('src/a.ts') // the trees compared drop it: without the note it reads as a deletion
      expect(delta).toContain(
        'Not deleted: put back as the base has them, so the change no longer touches them: src/a.ts.',
      )
    },
    SLOW,
  )
})
