// The diff the reviewer reads (lib/review/diff.ts over lib/snapshot/): submodules shown, nothing of the change written
// into .git/objects, the cap applied while git is read (git stopped there), large files named only as not reviewed. Expected values come from git itself or from a hand count of what the test wrote.
import { createHash } from 'node:crypto'
import { closeSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { workingDiff } from '../lib/review/diff.ts'
import { statThenPatch } from '../lib/snapshot/diff.ts'
import { git, makeRepo, sandbox, tempDir, writeFiles, withoutUserGitConfig } from './_helpers.ts'
import { expectError, expectOk } from './_expect.ts'
import { reviewArgs, SLOW } from './_review.ts'

// workingDiff runs here, in the test's own process: keep the developer's git config out of it
withoutUserGitConfig()

const head = (repo: string) => git(repo, ['rev-parse', 'HEAD']).trim()
/** The tree `git add -A` would commit, as git itself computes it (a temporary index: the repository's is untouched). */
const gitTree = (repo: string) => {
  const env = { ...process.env, GIT_INDEX_FILE: join(tempDir('pl-index-'), 'index') }
  git(repo, ['add', '-A'], env)
  return git(repo, ['write-tree'], env).trim()
}
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')
/** `count` lines of `width` bytes each (newline included), numbered from `from` so that each is distinct. */
const numberedLines = (count: number, width: number, from = 0) => {
  const lines: string[] = []
  for (let i = from; i < from + count; i++) lines.push(`line ${i} `.padEnd(width - 1, 'x'))
  return `${lines.join('\n')}\n`
}
/**
 * numberedLines written to `path` a megabyte or so at a time: a 60 MB file made as one string grew this test process
 * to ~490 MB, which every process it starts after pays for (a fork copies its page tables).
 */
function writeNumberedLines(path: string, count: number, width: number): void {
  const fd = openSync(path, 'w')
  try {
    const chunk = Math.max(1, Math.floor(1_048_576 / width))
    for (let from = 0; from < count; from += chunk)
      writeSync(fd, numberedLines(Math.min(chunk, count - from), width, from))
  } finally {
    closeSync(fd)
  }
}

async function reviewPrompt(sb: ReturnType<typeof sandbox>): Promise<string> {
  const promptFile = join(tempDir('pl-prompt-'), 'prompt.txt')
  expectOk(await sb.cli(reviewArgs('approve'), { env: { STUB_PROMPT_FILE: promptFile } }))
  return readFileSync(promptFile, 'utf8')
}

/** A repository with a submodule `vendor/lib` (from a local repository), committed. */
function withSubmodule() {
  const upstream = makeRepo({ 'lib.txt': 'one\n' }, 'upstream')
  const sb = sandbox({ 'README.md': '# demo\n' })
  git(sb.repo, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'vendor/lib'], sb.env)
  git(sb.repo, ['commit', '-qm', 'add the submodule'], sb.env)
  return { sb, sub: join(sb.repo, 'vendor', 'lib') }
}

describe('the review diff: submodules', () => {
  it(
    'shows a submodule whose commit moved, with its own diff (committed, uncommitted and untracked) against the recorded commit',
    async () => {
      const { sb, sub } = withSubmodule()
      expectOk(await sb.cli(['start', '--task', 'demo task'])) // the test's own change only
      const recorded = git(sb.repo, ['rev-parse', 'HEAD:vendor/lib']).trim()
      writeFiles(sub, { 'lib.txt': 'one\nCOMMITTED-IN-SUB-31a0\n' })
      git(sub, ['commit', '-qam', 'inside the submodule'], sb.env)
      writeFiles(sub, { 'lib.txt': 'one\nCOMMITTED-IN-SUB-31a0\nUNCOMMITTED-IN-SUB-8b44\n' })
      writeFiles(sub, { 'new.txt': 'UNTRACKED-IN-SUB-c9d2\n' })
      const done = expectOk(await sb.cli(['coder-done', '--summary', 'moved the submodule']))
      // inside it, against the commit the base records: lib.txt +2, new.txt +1 (a hand count)
      expect(done.diff).toEqual({ files: 2, insertions: 3, deletions: 0 })
      const prompt = await reviewPrompt(sb)
      expect(prompt).toContain(`vendor/lib | submodule: its recorded commit ${recorded.slice(0, 12)} → its work tree`)
      expect(prompt).toMatch(/ vendor\/lib\/lib\.txt \| 2 \+\+\n vendor\/lib\/new\.txt \| 1 \+/)
      expect(prompt).toContain('diff --git a/vendor/lib/lib.txt b/vendor/lib/lib.txt')
      expect(prompt).toContain('+COMMITTED-IN-SUB-31a0\n+UNCOMMITTED-IN-SUB-8b44\n')
      expect(prompt).toContain('diff --git a/vendor/lib/new.txt b/vendor/lib/new.txt')
      expect(prompt).toContain('+UNTRACKED-IN-SUB-c9d2')
    },
    SLOW,
  )

  it(
    'shows an uncommitted edit inside a submodule whose commit did not move',
    async () => {
      const { sb, sub } = withSubmodule()
      expectOk(await sb.cli(['start', '--task', 'demo task'])) // the test's own change only
      writeFiles(sub, { 'lib.txt': 'one\nEDIT-ONLY-5e7f\n' })
      const done = expectOk(await sb.cli(['coder-done', '--summary', 'edited inside the submodule']))
      expect(done.diff).toEqual({ files: 1, insertions: 1, deletions: 0 })
      const prompt = await reviewPrompt(sb)
      expect(prompt).toContain(`vendor/lib | submodule: its recorded commit ${head(sub).slice(0, 12)} → its work tree`)
      expect(prompt).toMatch(/ vendor\/lib\/lib\.txt \| 1 \+/)
      expect(prompt).toContain('--- a/vendor/lib/lib.txt\n+++ b/vendor/lib/lib.txt')
      expect(prompt).toContain('+EDIT-ONLY-5e7f')
    },
    SLOW,
  )

  it(
    'refuses to start while a submodule has changes inside',
    async () => {
      const { sb, sub } = withSubmodule()
      writeFiles(sub, { 'stray.txt': 'left over\n' })
      const error = expectError(await sb.cli(['start', '--task', 'demo task']), 'dirty_tree')
      expect(error.paths).toEqual(['vendor/lib'])
    },
    SLOW,
  )
})

describe('the review diff: what it writes and what it reads', () => {
  it(
    "writes nothing of an untracked file into .git/objects (the secret's blob does not exist after review)",
    async () => {
      const sb = sandbox()
      expectOk(await sb.cli(['start', '--task', 'demo task'])) // the test's own change only
      writeFiles(sb.repo, { 'secret.env': 'API_KEY=SECRET-VALUE-9f2e\n' })
      const blob = git(sb.repo, ['hash-object', 'secret.env']).trim() // hashed, not written
      expectOk(await sb.cli(['coder-done', '--summary', 'added a secret']))
      expect(await reviewPrompt(sb)).toContain('+API_KEY=SECRET-VALUE-9f2e')
      expect(() => git(sb.repo, ['cat-file', '-e', blob])).toThrow()
    },
    SLOW,
  )

  it('shows a file left unmerged by a merge, with its conflict markers, and leaves the index alone', async () => {
    const repo = makeRepo({ 'notes.txt': 'base\n' })
    const base = head(repo)
    git(repo, ['checkout', '-qb', 'other'])
    writeFiles(repo, { 'notes.txt': 'THEIRS-6a1c\n' })
    git(repo, ['commit', '-qam', 'theirs'])
    git(repo, ['checkout', '-q', 'main'])
    writeFiles(repo, { 'notes.txt': 'OURS-0d93\n' })
    git(repo, ['commit', '-qam', 'ours'])
    expect(() => git(repo, ['merge', '-q', 'other'])).toThrow()
    expect(git(repo, ['status', '--porcelain'])).toBe('UU notes.txt\n')
    const index = sha256(join(repo, '.git', 'index'))
    const diff = await workingDiff(repo, base, 200_000)
    expect(diff.diff).toContain('+<<<<<<< HEAD\n+OURS-0d93\n+=======\n+THEIRS-6a1c\n+>>>>>>> other\n')
    expect(sha256(join(repo, '.git', 'index'))).toBe(index)
  })
})

/** git's own diff of a repository with tracked changes only: what workingDiff must agree with. */
function changedRepo() {
  const before: Record<string, string> = {}
  const after: Record<string, string> = {}
  for (let i = 0; i < 6; i++) {
    before[`src/f${i}.txt`] = numberedLines(20, 30)
    after[`src/f${i}.txt`] = numberedLines(20, 30).replace(`line ${i * 3} `, `CHANGED ${i} ü€ `)
  }
  const repo = makeRepo(before)
  const base = head(repo)
  writeFiles(repo, after)
  const args = ['diff', '--no-color', '--find-renames', base]
  return { repo, base, full: Buffer.from(git(repo, args)), stat: git(repo, [...args, '--stat=200']).trimEnd() }
}

/** The longest head of `full` within `cap` bytes that ends at a whole line (independent of lib's cutAtLine). */
function expectedHead(full: Buffer, cap: number): string {
  let end = 0
  for (let at = full.indexOf(10); at >= 0 && at < cap; at = full.indexOf(10, at + 1)) end = at + 1
  return full.subarray(0, end).toString('utf8')
}

describe('the review diff: the cap', () => {
  const { repo, base, full, stat } = changedRepo()
  const size = full.length
  const cases = [
    { cap: 80, why: 'less than the first file' },
    { cap: 500, why: 'a few hunks' },
    { cap: full.indexOf('€') + 1, why: 'inside a multi-byte character' },
    { cap: size - 1, why: 'one byte short' },
    { cap: size, why: 'exactly the diff' },
    { cap: size * 4, why: 'far more than the diff' },
  ]
  for (const { cap, why } of cases)
    it(`keeps whole lines within a cap of ${why}, with git's own stat, and says whether it cut`, async () => {
      const diff = await workingDiff(repo, base, cap)
      expect(diff.stat).toBe(stat)
      expect(diff.truncated).toBe(size > cap)
      expect(diff.diff).toBe(size > cap ? expectedHead(full, cap) : full.toString('utf8'))
      expect(Buffer.byteLength(diff.diff)).toBeLessThanOrEqual(cap)
      if (size > cap) expect(diff.bytes).toBeGreaterThan(cap)
      else expect(diff.bytes).toBe(size)
    })
})

describe('the review diff: large files', () => {
  it('stops reading git once past the cap: a 5 MB untracked file, 200 kB kept, git stopped well before its end', async () => {
    const repo = makeRepo()
    const base = head(repo)
    const text = numberedLines(100_000, 50)
    writeFileSync(join(repo, 'big.txt'), text)
    const diff = await workingDiff(repo, base, 200_000)
    expect(diff.stat).toMatch(/ big\.txt \| 100000 \+/)
    expect(diff.tree).toBe(gitTree(repo))
    expect(diff.truncated).toBe(true)
    expect(Buffer.byteLength(diff.diff)).toBeLessThanOrEqual(200_000)
    expect(diff.diff.endsWith('\n')).toBe(true)
    const header = 'diff --git a/big.txt b/big.txt\nnew file mode 100644\n'
    expect(diff.diff.startsWith(header)).toBe(true)
    const shown = diff.diff.split('\n').slice(6, -1) // past diff --git, new file mode, index, ---, +++ and @@
    expect(shown.join('\n')).toBe(
      text
        .split('\n')
        .slice(0, shown.length)
        .map((line) => `+${line}`)
        .join('\n'),
    )
    expect(diff.bytes).toBeGreaterThan(200_000)
    expect(diff.bytes).toBeLessThan(text.length / 2)
  })

  it('names a text file over 16 MiB only, as not reviewed, with its size and its blob id as git computes it', async () => {
    const repo = makeRepo()
    const base = head(repo)
    const size = 17 * 1024 * 1024
    writeNumberedLines(join(repo, 'huge.txt'), size / 64, 64)
    const diff = await workingDiff(repo, base, 200_000)
    const oid = git(repo, ['hash-object', '--no-filters', 'huge.txt']).trim()
    expect(diff.stat).toContain(` huge.txt | added, over 16 MiB: NOT REVIEWED (now ${oid}, 17825792 bytes)`)
    expect(diff.unreviewed).toEqual([{ path: 'huge.txt', why: 'over 16 MiB', oid, size: 17 * 1024 * 1024 }])
    expect(diff.diff).toBe('')
    expect(diff.truncated).toBe(false)
  })

  it('names a file over 16 MiB with its size again from a snapshot that does not read it again', async () => {
    const repo = makeRepo()
    const base = head(repo)
    const home = tempDir('pl-home-')
    writeNumberedLines(join(repo, 'huge.txt'), (17 * 1024 * 1024) / 64, 64)
    const past = new Date(Date.now() - 60_000) // old enough for git's stat check to trust: not read again
    utimesSync(join(repo, 'huge.txt'), past, past)
    const first = await workingDiff(repo, base, 200_000, home)
    rmSync(join(home, 'cache', 'snapshot', 'by-tree'), { recursive: true }) // the diff computed again, not kept
    const again = await workingDiff(repo, base, 200_000, home)
    expect(again.stat).toContain(', 17825792 bytes)')
    expect([again.stat, again.unreviewed]).toEqual([first.stat, first.unreviewed])
  })

  it("names a file over 16 MiB the change deletes with the base's size, read from the repository", async () => {
    const repo = makeRepo()
    writeNumberedLines(join(repo, 'huge.txt'), (17 * 1024 * 1024) / 64, 64)
    git(repo, ['add', 'huge.txt'])
    git(repo, ['commit', '-qm', 'a huge file'])
    const base = head(repo)
    const oid = git(repo, ['rev-parse', 'HEAD:huge.txt']).trim()
    rmSync(join(repo, 'huge.txt'))
    const diff = await workingDiff(repo, base, 200_000, tempDir('pl-home-'))
    expect(diff.stat).toContain(
      ` huge.txt | deleted, over 16 MiB: NOT REVIEWED (was ${oid.slice(0, 12)}, 17825792 bytes)`,
    )
    expect(diff.unreviewed).toEqual([{ path: 'huge.txt', why: 'over 16 MiB', oid, size: 17825792 }])
  })

  it(
    "counts a 60 MB untracked file as one changed file in coder-done's diff stat, its lines unread (named only)",
    async () => {
      const sb = sandbox()
      expectOk(await sb.cli(['start', '--task', 'demo task'])) // the test's own change only
      writeNumberedLines(join(sb.repo, 'data.csv'), 1_000_000, 60)
      const done = expectOk(await sb.cli(['coder-done', '--summary', 'a large data file']))
      expect(done.diff).toEqual({ files: 1, insertions: 0, deletions: 0 })
    },
    SLOW,
  )
})

describe("the repository's index", () => {
  it("shows a same-size edit the index's stat data calls clean, and leaves the index alone (its stat cache is not used)", async () => {
    // the edit the diff must show: same size as the committed file, written in the second the index was
    const repo = makeRepo({ 'a.txt': 'one\n' })
    const index = join(repo, '.git', 'index')
    const second = Math.floor(Date.now() / 1000) - 5
    // the index records the file as of that second; then the edit, the file and the index left stamped in it
    utimesSync(join(repo, 'a.txt'), second, second)
    git(repo, ['update-index', '--refresh'])
    writeFileSync(join(repo, 'a.txt'), 'two\n')
    utimesSync(join(repo, 'a.txt'), second, second)
    utimesSync(index, second, second)
    const base = git(repo, ['rev-parse', 'HEAD']).trim()
    const diff = await workingDiff(repo, base, 100_000)
    expect(diff.diff).toContain('+two')
    expect(statSync(index).mtimeMs).toBe(second * 1000) // the user's index untouched
  })
})

describe("the review diff: git's stat and patch read from one call", () => {
  const stat = ' "new\\nline" |   1 +\n x.txt        |   2 +-\n 2 files changed, 2 insertions(+), 1 deletion(-)\n'
  const patch = 'diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-b\n+c\n\n+after an empty line\n'
  const printed = Buffer.from(`${stat}\n${patch}`)

  it('splits at the empty line that ends the stat, however the output is cut around it', () => {
    for (let cut = 0; cut <= printed.length; cut++) {
      const seen: Buffer[] = []
      const shown: Buffer[] = []
      const onData = statThenPatch(
        (chunk) => void seen.push(chunk),
        (chunk) => shown.push(chunk) > 0,
      )
      for (const chunk of [printed.subarray(0, cut), printed.subarray(cut)]) onData(chunk)
      expect([Buffer.concat(seen).toString(), Buffer.concat(shown).toString()]).toEqual([stat, patch])
    }
  })
})
