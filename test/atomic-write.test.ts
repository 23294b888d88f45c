// A file written whole (lib/ground/fsutil.ts writeFileAtomic) sweeps the temp files a killed writer left beside it, never the
// one another live process is writing right now: two commands at once write the snapshot's caches without a lock.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { writeFileAtomic } from '../lib/ground/fsutil.ts'
import { tempDir } from './_helpers.ts'

const live: Array<ReturnType<typeof spawn>> = []
afterEach(() => {
  for (const child of live.splice(0)) child.kill('SIGKILL')
})

/** A temp file beside `path` as the writer `pid` names its own. */
function tempOf(path: string, pid: number): string {
  const temp = join(path, '..', `.${path.split('/').at(-1)}.${pid}.1796191474684.tmp`)
  writeFileSync(temp, 'half of it')
  return temp
}

describe('writeFileAtomic', () => {
  it('leaves the temp file of another process still running: its rename is still to come', () => {
    const path = join(tempDir('pl-atomic-'), 'cache.json')
    const writer = spawn('sleep', ['30'])
    live.push(writer)
    const theirs = tempOf(path, writer.pid!)
    writeFileAtomic(path, '{"ours":true}\n')
    expect(readFileSync(path, 'utf8')).toBe('{"ours":true}\n')
    expect(existsSync(theirs)).toBe(true)
  })

  it('sweeps the temp file of a writer that is gone', () => {
    const path = join(tempDir('pl-atomic-'), 'cache.json')
    const gone = spawnSync('true').pid!
    const left = tempOf(path, gone)
    writeFileAtomic(path, '{"ours":true}\n')
    expect(existsSync(left)).toBe(false)
  })
})
