// Set up for the whole run, in both runners: one temp folder that everything the tests put in the temp dir goes
// under (the processes they start included), removed at the end. test/_helpers.ts removes its own folders per file;
// this catches whatever else lands in the temp dir (a library's temp file, a test that calls tmpdir() itself).
// The folder is in memory (/dev/shm) when that is a tmpfs with room and lets programs run: the tests write, fsync and
// remove tens of thousands of small files, which on this machine's disk (ext4, mounted with discard) cost a fifth of
// the suite's CPU (measured back to back: 234.4 s wall / 399 s CPU with /tmp, 202.9 s / 343 s with /dev/shm).
// PAIR_LOOP_TEST_TMPDIR names another parent; the system's own temp dir stays known to the tests that need a disk
// (PAIR_LOOP_TEST_SYSTEM_TMPDIR: Deno under narrow permissions refuses every path under /dev).
// - vitest: `globalSetup` runs the default export in the main process before the workers start. The workers inherit
//   TMPDIR; the teardown it returns runs after the last file. It also builds dist/: vitest runs the built CLI.
// - bun: bunfig.toml preloads this module. Under --isolate the preload runs again for every test file, with the
//   environment as it was, so the folder and its afterAll are per file; without --isolate, once for the run.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureBuilt } from './_build.ts'

const MEMORY = '/dev/shm'
/** Free space the memory folder must have: the tests' largest file is 60 MB; all of a run's folders at once came to 315 MB. */
const ROOM = 2 * 1024 ** 3

/** /dev/shm when it is there with room, writable, and lets a script run (it may be mounted noexec); else null. */
function memoryFolder(): string | null {
  let probe: string | undefined
  try {
    const { bavail, bsize } = statfsSync(MEMORY)
    if (bavail * bsize < ROOM) return null
    probe = mkdtempSync(join(MEMORY, 'pair-loop-probe-'))
    writeFileSync(join(probe, 'run'), '#!/bin/sh\nexit 7\n', { mode: 0o755 })
    return spawnSync(join(probe, 'run')).status === 7 ? MEMORY : null
  } catch {
    return null
  } finally {
    if (probe) rmSync(probe, { recursive: true, force: true })
  }
}

/** Point TMPDIR at a fresh folder; the returned function removes it and puts TMPDIR back. */
function redirectTmp(): () => void {
  const previous = process.env.TMPDIR
  process.env.PAIR_LOOP_TEST_SYSTEM_TMPDIR ??= tmpdir()
  const parent = process.env.PAIR_LOOP_TEST_TMPDIR ?? memoryFolder() ?? tmpdir()
  const dir = realpathSync(mkdtempSync(join(parent, `pair-loop-test-run-${process.pid}-`)))
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
