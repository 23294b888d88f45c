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

  it('never shows a reader in another process a torn file: each read is one whole version', async () => {
    const path = join(tempDir('pl-atomic-'), 'state.json')
    const size = 4 << 20 // 4 MiB: many write(2) calls each
    const versions = ['a', 'b'].map((fill) => `${fill.repeat(size)}\n`)
    writeFileAtomic(path, versions[0]!)
    // the reader counts reads that are neither version (a file written in place shows empty or half-written ones)
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'), wholes = new Set(['a', 'b'].map((fill) => fill.repeat(${size}) + '\\n'))
         let torn = 0, reads = 0
         process.stdin.on('data', () => { process.stdout.write(JSON.stringify({ torn, reads })); process.exit(0) })
         ;(function loop() { reads++; try { if (!wholes.has(fs.readFileSync(${JSON.stringify(path)}, 'latin1'))) torn++ } catch { torn++ } setImmediate(loop) })()`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    )
    live.push(reader)
    let out = ''
    reader.stdout!.on('data', (chunk) => (out += chunk))
    await new Promise((resolve) => setTimeout(resolve, 300)) // the reader is up and reading
    for (let i = 0; i < 60; i++) writeFileAtomic(path, versions[i % 2]!, 0o600, { durable: false })
    reader.stdin!.write('stop\n')
    await new Promise((resolve) => reader.on('exit', resolve))
    const { torn, reads } = JSON.parse(out) as { torn: number; reads: number }
    expect(reads).toBeGreaterThan(10)
    expect(torn).toBe(0)
  })

  it('sweeps the temp file of a writer that is gone', () => {
    const path = join(tempDir('pl-atomic-'), 'cache.json')
    const gone = spawnSync('true').pid!
    const left = tempOf(path, gone)
    writeFileAtomic(path, '{"ours":true}\n')
    expect(existsSync(left)).toBe(false)
  })
})
