// Run by test/reliability/cleanup.test.ts in a runner of its own with an empty TMPDIR, which must be empty again
// after: the ways tests put things in the temp dir, through the helpers and past them. (Not *.test.ts: the normal
// runs do not pick it up.)
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sandbox, tempDir } from '../../_helpers.ts'

describe('a test file that makes temp dirs', () => {
  it('through the helpers: a repository, a home, a temp dir', async () => {
    const sb = sandbox()
    expect((await sb.cli(['start', '--task', 'leave nothing behind'])).code).toBe(0)
    writeFileSync(join(tempDir('pl-fixture-'), 'file.txt'), 'x')
  })

  it('through a CLI process: the demo keeps its temp repository (--keep), in the TMPDIR it was given', async () => {
    const sb = sandbox()
    expect((await sb.cliProcess(['demo', '--keep'])).code).toBe(0)
  })

  it('past the helpers: straight into the temp dir', () => {
    writeFileSync(join(mkdtempSync(join(tmpdir(), 'pl-fixture-direct-')), 'file.txt'), 'x')
  })
})
