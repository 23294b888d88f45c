// Tests clean up after themselves. A test file run on its own, by the runner running this test (vitest, or bun test
// --isolate), with a fresh empty TMPDIR: that TMPDIR is empty again afterwards, whether the file made its temp dirs
// through test/_helpers.ts, through a CLI process, or straight with tmpdir(). A regression in the per-file cleanup
// (test/_helpers.ts) or the run's temp folder (test/_global-setup.ts, bunfig.toml) fails here.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, isBun, runProcess, tempDir } from '../_helpers.ts'

const FIXTURE = 'test/reliability/cleanup-fixture'

describe('test hygiene', () => {
  it(`leaves the temp dir as it found it after a test file (${isBun ? 'bun test --isolate' : 'vitest'})`, async () => {
    const empty = tempDir('pl-cleanup-')
    // PAIR_LOOP_TEST_TMPDIR as well: the run's temp folder would otherwise go under /dev/shm, and `empty` stay empty for nothing
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: empty,
      PAIR_LOOP_TEST_TMPDIR: empty,
      NO_COLOR: '1',
    }
    const argv = isBun
      ? [process.execPath, 'test', '--isolate', '--timeout', '60000', `./${FIXTURE}/leaves-nothing.fixture.ts`]
      : [
          process.execPath,
          join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
          'run',
          '--config',
          `${FIXTURE}/vitest.config.ts`,
        ]
    const result = await runProcess(argv, { cwd: ROOT, env, timeoutMs: 90_000 })
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(`${result.stdout}\n${result.stderr}`).toMatch(/3 pass/)
    expect(readdirSync(empty)).toEqual([])
  }, 120_000)
})
