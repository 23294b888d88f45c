// Set up for the whole run, in both runners: one temp folder that everything the tests put in the temp dir goes
// under (the processes they start included), removed at the end. test/_helpers.ts removes its own folders per file;
// this catches whatever else lands in the temp dir (a library's temp file, a test that calls tmpdir() itself).
// - vitest: `globalSetup` runs the default export in the main process before the workers start. The workers inherit
//   TMPDIR; the teardown it returns runs after the last file. It also builds dist/: vitest runs the built CLI.
// - bun: bunfig.toml preloads this module. Under --isolate the preload runs again for every test file, with the
//   environment as it was, so the folder and its afterAll are per file; without --isolate, once for the run.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureBuilt } from './_build.ts'

/** Point TMPDIR at a fresh folder; the returned function removes it and puts TMPDIR back. */
function redirectTmp(): () => void {
  const previous = process.env.TMPDIR
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `pair-loop-test-run-${process.pid}-`)))
  process.env.TMPDIR = dir
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    if (process.env.PAIR_LOOP_TEST_KEEP === '1') {
      process.stderr.write(`test temp dirs kept in ${dir} (PAIR_LOOP_TEST_KEEP=1)\n`)
      return
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
    } catch (error) {
      process.stderr.write(`could not remove the test temp dir ${dir}: ${(error as Error).message}\n`)
    }
  }
}

export default function setup(): () => void {
  ensureBuilt()
  return redirectTmp()
}

if (typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined') {
  const { afterAll } = await import('vitest')
  afterAll(redirectTmp())
}
