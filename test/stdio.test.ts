// The process's output is written straight to its file descriptors (lib/ground/stdio.ts): a reader that leaves early or
// reads slowly must neither crash the command nor cut its document.
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, constants, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, tempDir } from './_helpers.ts'

interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Run the CLI; its stdout is read only after `readAfterMs`, or closed at once (`closeStdout`). */
function runWithReader(args: string[], reader: { closeStdout?: boolean; readAfterMs?: number }): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], {
      cwd: tempDir(),
      env: isolatedEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    if (reader.closeStdout) child.stdout.destroy()
    else {
      child.stdout.pause()
      setTimeout(() => child.stdout.on('data', (chunk: Buffer) => out.push(chunk)).resume(), reader.readAfterMs ?? 0)
    }
    child.on('error', reject)
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    )
  })
}

describe('the output', () => {
  it('ends quietly with its own exit status when the reader closes the pipe before the document', async () => {
    const ended = await runWithReader(['codes'], { closeStdout: true })
    expect(ended).toMatchObject({ code: 0, signal: null, stderr: '' })
  })

  it('reaches a slow reader whole when the document is larger than the pipe holds', async () => {
    // an unknown command is named in the usage document: 120,000 characters, about twice a 64 KiB pipe buffer
    const name = 'x'.repeat(120_000)
    const ended = await runWithReader([name], { readAfterMs: 300 })
    expect(ended.code).toBe(2)
    const document = JSON.parse(ended.stdout)
    expect(document).toMatchObject({ version: 1, errors: [{ code: 'usage' }] })
    expect(document.errors[0].message).toContain(name)
    expect(ended.stderr.split('\n')).toHaveLength(2) // one line, then the final newline
  })

  it('waits out a full non-blocking pipe (EAGAIN) and still delivers the whole document', async () => {
    // a FIFO opened non-blocking: the flag is on the open file, so the command's stdout is non-blocking too
    const fifo = join(tempDir(), 'out.fifo')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    const name = 'x'.repeat(120_000)
    // handed over as fd 3 and made stdout by the shell: libuv sets a child's fds 0-2 blocking, not the others
    const child = spawn('sh', ['-c', 'exec "$0" "$@" >&3 3>&-', ...CLI_COMMAND, name], {
      cwd: tempDir(),
      env: isolatedEnv(),
      stdio: ['ignore', 'ignore', 'ignore', writer],
    })
    closeSync(writer)
    const chunks: Buffer[] = []
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise((resolve) => setTimeout(resolve, 300)) // the command fills the pipe and meets EAGAIN meanwhile
    let done = false
    void exit.then(() => {
      done = true
    })
    for (;;) {
      const buffer = Buffer.alloc(65_536)
      let read = 0
      try {
        read = readSync(reader, buffer)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
      }
      if (read > 0) chunks.push(buffer.subarray(0, read))
      else if (done) break
      else await new Promise((resolve) => setTimeout(resolve, 5))
    }
    closeSync(reader)
    expect(await exit).toBe(2)
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8')).errors[0].message).toContain(name)
  })
})
