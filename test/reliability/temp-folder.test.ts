// pair-loop's temp folders live in $TMPDIR, where anyone running as the same user can write: what they drop in one
// while it is being removed must never turn a command into `internal`.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { withTempDir } from '../../lib/ground/fsutil.ts'

/**
 * Another process writing new files into `dir` as fast as it can, until it is killed: a shell loop whose redirection
 * creates each file without a process of its own (a node script did the same after ~100 ms of start-up CPU a try).
 */
function dropFilesInto(dir: string) {
  const script = 'i=0; while :; do printf x 2>/dev/null >"$1/dropped-$i"; i=$((i + 1)); done'
  const child = spawn('/bin/sh', ['-c', script, 'sh', dir], { stdio: 'ignore' })
  return { stop: () => child.kill('SIGKILL') }
}

async function untilSomethingIn(dir: string): Promise<void> {
  while (readdirSync(dir).length === 0) await sleep(5)
}

const TRIES = 20

describe('a temp folder that another process writes into while it is removed', () => {
  it(`is left with a note, never an error, in ${TRIES} tries out of ${TRIES}`, async () => {
    const failures: string[] = []
    const notes: string[] = []
    for (let i = 0; i < TRIES; i++) {
      let folder = ''
      let dropper: ReturnType<typeof dropFilesInto> | undefined
      try {
        const value = await withTempDir(
          'pair-loop-race-',
          async (dir) => {
            folder = dir
            dropper = dropFilesInto(dir)
            await untilSomethingIn(dir)
            return 'used'
          },
          (text) => notes.push(text),
        )
        expect(value).toBe('used')
      } catch (error) {
        failures.push((error as Error).message)
      } finally {
        dropper?.stop()
        await sleep(20)
        rmSync(folder, { recursive: true, force: true, maxRetries: 5 })
      }
    }
    process.stderr.write(`[temp-folder] ${notes.length} of ${TRIES} cleanups left a note\n`)
    expect(failures).toEqual([])
    for (const text of notes) expect(text).toMatch(/^pair-loop: note: left the temp folder .* behind/)
  }, 60_000)

  it('is removed whole when nobody else writes there', async () => {
    let folder = ''
    await withTempDir('pair-loop-quiet-', async (dir) => {
      folder = dir
    })
    expect(existsSync(folder)).toBe(false)
  })
})
