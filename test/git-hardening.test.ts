// git runs nothing the repository configures (DESIGN.md, Trust): each trap below is something a coder can set in
// .git/config or .git/info/attributes. Each test first shows that plain git springs the trap, then runs `start`,
// `coder-done` and `review` and checks that none of them did, and that the reviewer got the bytes on disk.
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gitTry } from '../lib/ground/git.ts'
import { git, sandbox, tempDir, writeFiles } from './_helpers.ts'
import { expectOk, type Sandbox } from './_expect.ts'
import { reviewArgs, SLOW } from './_review.ts'

interface Trap {
  name: string
  /** Set the trap in the repository (before `start`). */
  arm: (t: Armed) => void
  /** Plain git, shown to spring it: the marker appears, or the diff it prints is not the bytes on disk. */
  springs: (t: Armed) => void
  /** The coder's change (after `start`). */
  change: (t: Armed) => void
  /** What the review prompt must show (the bytes on disk) and must not. */
  shows: string[]
  hides: string[]
}

interface Armed {
  sb: Sandbox
  marker: string
  /** A shell script that touches the marker, then runs `then`. */
  script: (name: string, then: string) => string
  plainGit: (args: string[]) => string
}

const BASE_TEXT = 'base line\n'
const REAL_TEXT = 'base line\nREAL-BYTES-ON-DISK-7c21\n'
const STAMP_BASE = 'const v = "$Id$"\n'
const STAMP_HIDING = 'const v = "$Id: "; REAL-BYTES-ON-DISK-7c21(); "$"\n'
const CRLF_TEXT = 'base line\r\nREAL-BYTES-ON-DISK-7c21\r\n'
const setAttributes = (t: Armed, line: string) => writeFiles(t.sb.repo, { '.git/info/attributes': `${line}\n` })
const setConfig = (t: Armed, key: string, value: string) => t.plainGit(['config', key, value])
const writeNotes = (t: Armed, text = REAL_TEXT) => writeFileSync(join(t.sb.repo, 'notes.txt'), text)
/** A hooks folder the repository's config names, each hook touching the marker. */
const armHooks = (t: Armed) => {
  const hooks = join(t.marker, '..', 'hooks')
  mkdirSync(hooks)
  for (const hook of ['post-index-change', 'reference-transaction', 'post-checkout', 'pre-auto-gc'])
    renameSync(t.script(`${hook}.sh`, 'exit 0'), join(hooks, hook))
  setConfig(t, 'core.hooksPath', hooks)
}
const expectMarker = (t: Armed) => {
  expect(existsSync(t.marker), 'plain git springs the trap').toBe(true)
  rmSync(t.marker)
}

const TRAPS: Trap[] = [
  {
    name: 'a textconv driver does not replace what the reviewer reads',
    arm: (t) => {
      setAttributes(t, '*.txt diff=fake')
      setConfig(t, 'diff.fake.textconv', t.script('textconv.sh', 'sed s/REAL-BYTES/harmless/ "$1"'))
    },
    springs: (t) => {
      writeNotes(t)
      expect(t.plainGit(['diff'])).toContain('+harmless-ON-DISK-7c21')
      expectMarker(t)
      t.plainGit(['checkout', '--', 'notes.txt'])
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: ['harmless'],
  },
  {
    name: 'a core.fsmonitor hook never runs',
    arm: (t) => setConfig(t, 'core.fsmonitor', t.script('fsmonitor.sh', 'exit 1')),
    springs: (t) => {
      t.plainGit(['status', '--porcelain'])
      expectMarker(t)
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: [],
  },
  {
    // every hook git runs for a command that writes the index or a ref, from a folder the config names
    name: 'a hook named by core.hooksPath never runs',
    arm: (t) => armHooks(t),
    springs: (t) => {
      writeNotes(t)
      utimesSync(join(t.sb.repo, 'notes.txt'), 1_000_000, 1_000_000)
      t.plainGit(['status', '--porcelain']) // refreshing the stat-dirty entry writes the index: post-index-change
      expectMarker(t)
      t.plainGit(['checkout', '--', 'notes.txt'])
      rmSync(t.marker, { force: true })
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: [],
  },
  {
    name: 'a clean filter neither runs nor changes the bytes shown',
    arm: (t) => {
      setAttributes(t, '*.txt filter=evil')
      setConfig(t, 'filter.evil.clean', t.script('clean.sh', 'sed s/REAL-BYTES/laundered/'))
    },
    springs: (t) => {
      writeNotes(t)
      expect(t.plainGit(['diff'])).toContain('+laundered-ON-DISK-7c21')
      expectMarker(t)
      writeNotes(t, BASE_TEXT)
      utimesSync(join(t.sb.repo, 'notes.txt'), 1_000_000, 1_000_000) // stat-dirty: `git status` in start hashes it
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: ['laundered'],
  },
  {
    name: 'an external diff (diff.external) never runs',
    arm: (t) => setConfig(t, 'diff.external', t.script('external.sh', 'echo EXTERNAL-DIFF-OUTPUT')),
    springs: (t) => {
      writeNotes(t)
      expect(t.plainGit(['diff'])).toContain('EXTERNAL-DIFF-OUTPUT')
      expectMarker(t)
      t.plainGit(['checkout', '--', 'notes.txt'])
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: ['EXTERNAL-DIFF-OUTPUT'],
  },
  {
    name: 'a diff driver marked binary does not hide a text file',
    arm: (t) => {
      setAttributes(t, '*.txt diff=opaque')
      setConfig(t, 'diff.opaque.binary', 'true')
    },
    springs: (t) => {
      writeNotes(t)
      expect(t.plainGit(['diff'])).toContain('Binary files a/notes.txt and b/notes.txt differ')
      t.plainGit(['checkout', '--', 'notes.txt'])
    },
    change: writeNotes,
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: ['Binary files'],
  },
  ...(['-diff', 'binary'] as const).map(
    (attribute): Trap => ({
      name: `a text file marked \`${attribute}\` in .git/info/attributes is still shown as text`,
      arm: (t) => setAttributes(t, `*.txt ${attribute}`),
      springs: (t) => {
        writeNotes(t)
        expect(t.plainGit(['diff'])).toContain('Binary files a/notes.txt and b/notes.txt differ')
        t.plainGit(['checkout', '--', 'notes.txt'])
      },
      change: writeNotes,
      shows: ['+REAL-BYTES-ON-DISK-7c21'],
      hides: [],
    }),
  ),
  {
    name: 'a .gitattributes in the change itself cannot make a text file read as binary',
    arm: () => {},
    springs: () => {},
    change: (t) => {
      writeFiles(t.sb.repo, { '.gitattributes': '*.txt -diff\n' })
      writeNotes(t)
      expect(t.plainGit(['diff'])).toContain('Binary files a/notes.txt and b/notes.txt differ')
    },
    shows: ['+REAL-BYTES-ON-DISK-7c21', '+*.txt -diff'],
    hides: [],
  },
  {
    // `ident` collapses `$Id: … $` to `$Id$` before git compares: a change made only in between is no change to git
    name: 'an ident attribute does not hide a change written inside $Id: … $',
    arm: (t) => {
      setAttributes(t, '*.txt ident')
      writeFiles(t.sb.repo, { 'stamp.txt': STAMP_BASE })
      t.plainGit(['add', 'stamp.txt'])
      t.plainGit(['commit', '-qm', 'a stamped file'])
    },
    springs: (t) => {
      writeFiles(t.sb.repo, { 'stamp.txt': STAMP_HIDING })
      expect(t.plainGit(['diff', 'HEAD']), 'plain git sees no change').toBe('')
      writeFiles(t.sb.repo, { 'stamp.txt': STAMP_BASE })
    },
    change: (t) => writeFiles(t.sb.repo, { 'stamp.txt': STAMP_HIDING }),
    shows: [`-${STAMP_BASE}`, `+${STAMP_HIDING}`, ' stamp.txt | 2 +-'],
    hides: [],
  },
  {
    name: 'a text attribute does not drop the carriage returns of the bytes on disk',
    arm: (t) => setAttributes(t, '*.txt text'),
    springs: (t) => {
      writeNotes(t, CRLF_TEXT)
      expect(t.plainGit(['diff'])).not.toContain('\r')
      t.plainGit(['checkout', '--', 'notes.txt'])
    },
    change: (t) => writeNotes(t, CRLF_TEXT),
    shows: ['+REAL-BYTES-ON-DISK-7c21\r\n'],
    hides: [],
  },
  {
    name: "a replace ref does not swap the base's content for the change",
    arm: () => {},
    springs: () => {},
    change: (t) => {
      writeNotes(t)
      const base = t.plainGit(['rev-parse', 'HEAD:notes.txt']).trim()
      const changed = t.plainGit(['hash-object', '-w', 'notes.txt']).trim()
      t.plainGit(['replace', base, changed])
      expect(t.plainGit(['diff', 'HEAD', '--', 'notes.txt']), 'plain git sees no change').not.toContain('REAL-BYTES')
    },
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: [],
  },
  {
    name: 'a file flagged assume-unchanged in the index is still shown',
    arm: () => {},
    springs: () => {},
    change: (t) => {
      writeNotes(t)
      t.plainGit(['update-index', '--assume-unchanged', 'notes.txt'])
      expect(t.plainGit(['diff', 'HEAD']), 'plain git sees no change').toBe('')
    },
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: [],
  },
  {
    name: 'a file flagged skip-worktree in the index is still shown',
    arm: () => {},
    springs: () => {},
    change: (t) => {
      writeNotes(t)
      t.plainGit(['update-index', '--skip-worktree', 'notes.txt'])
      expect(t.plainGit(['diff', 'HEAD']), 'plain git sees no change').toBe('')
    },
    shows: ['+REAL-BYTES-ON-DISK-7c21'],
    hides: [],
  },
]

/** A fresh repository with notes.txt, and a marker in a temp folder of its own. */
function armable(): Armed {
  const sb = sandbox({ 'README.md': '# demo\n', 'notes.txt': BASE_TEXT })
  const dir = tempDir('pl-trap-')
  const marker = join(dir, 'sprung')
  return {
    sb,
    marker,
    script: (name, then) => {
      const path = join(dir, name)
      writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\n${then}\n`)
      chmodSync(path, 0o755)
      return path
    },
    plainGit: (args) => git(sb.repo, args, sb.env),
  }
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('git runs nothing the repository configures', () => {
  for (const trap of TRAPS)
    it(
      trap.name,
      async () => {
        const t = armable()
        const { sb, marker } = t
        const dir = join(marker, '..')
        trap.arm(t)
        trap.springs(t)
        // each command on its own: the marker must not appear while it runs
        const quietly = async (command: string[], env: Record<string, string> = {}) => {
          rmSync(marker, { force: true })
          const doc = expectOk(await sb.cli(command, { env }))
          expect(existsSync(marker), `${command[0]} sprang the trap`).toBe(false)
          return doc
        }
        await quietly(['start', '--task', 'demo task'])
        trap.change(t)
        await quietly(['coder-done', '--summary', 'changed notes.txt'])
        const index = join(sb.repo, '.git', 'index')
        const indexBefore = sha256(index)
        const promptFile = join(dir, 'prompt.txt')
        await quietly(reviewArgs('approve'), { STUB_PROMPT_FILE: promptFile })
        const prompt = readFileSync(promptFile, 'utf8')
        for (const text of trap.shows) expect(prompt).toContain(text)
        for (const text of trap.hides) expect(prompt).not.toContain(text)
        expect(sha256(index), "the user's index is left byte-identical").toBe(indexBefore)
      },
      SLOW,
    )
})

// pair-loop's own commands never write the index or a ref (status runs without optional locks), so the trap above
// cannot tell whether hooks are off: a hardened call that does write the index can
describe('a hardened git call', () => {
  it('runs no hook of the repository even when it writes the index', async () => {
    const t = armable()
    armHooks(t)
    utimesSync(join(t.sb.repo, 'notes.txt'), 1_000_000, 1_000_000) // stat-dirty: a refresh rewrites its index entry
    const indexBefore = sha256(join(t.sb.repo, '.git', 'index'))
    const result = await gitTry(t.sb.repo, ['update-index', '-q', '--refresh'], { env: t.sb.env })
    expect(result.ok, result.stderr).toBe(true)
    expect(sha256(join(t.sb.repo, '.git', 'index')), 'the refresh wrote the index').not.toBe(indexBefore)
    expect(existsSync(t.marker), 'a hook ran').toBe(false)
  })
})
