// The process's output is written straight to its file descriptors (lib/ground/stdio.ts): a reader that leaves early or
// reads slowly must neither crash the command nor cut its document.
import { spawn, spawnSync, type StdioOptions } from 'node:child_process'
import { closeSync, constants, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_COMMAND, isolatedEnv, tempDir } from './_helpers.ts'

interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stderr: string
}

/** Run the CLI with its stdout closed at once, before it writes: what it ends with, and what it said on stderr. */
function runWithStdoutClosed(args: string[]): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], {
      cwd: tempDir(),
      env: isolatedEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const err: Buffer[] = []
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    child.stdout.destroy()
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stderr: Buffer.concat(err).toString('utf8') }))
  })
}

/**
 * The CLI, given an unknown command `name`, writing its stdout into a FIFO (a 64 KiB pipe) that is read only after
 * 300 ms, then as it comes. `blocking: false`: the FIFO opened non-blocking, so the command meets EAGAIN (the flag is
 * on the open file; the shell hands it over as fd 3 and makes it stdout, as libuv sets a child's fds 0-2 blocking).
 */
async function runIntoFifo(name: string, { blocking }: { blocking: boolean }) {
  const fifo = join(tempDir(), 'out.fifo')
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(fifo, constants.O_WRONLY | (blocking ? 0 : constants.O_NONBLOCK))
  const err: Buffer[] = []
  const [command, stdio] = blocking
    ? [
        [...CLI_COMMAND, name],
        ['ignore', writer, 'pipe'],
      ]
    : [
        ['sh', '-c', 'exec "$0" "$@" >&3 3>&-', ...CLI_COMMAND, name],
        ['ignore', 'ignore', 'pipe', writer],
      ]
  const child = spawn(command[0]!, command.slice(1), {
    cwd: tempDir(),
    env: isolatedEnv(),
    stdio: stdio as StdioOptions,
  })
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
  closeSync(writer)
  const chunks: Buffer[] = []
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve))
  await new Promise((resolve) => setTimeout(resolve, 300)) // the command fills the pipe and waits meanwhile
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
  return {
    code: await exit,
    stdout: Buffer.concat(chunks).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  }
}

describe('the output', () => {
  it('ends quietly with its own exit status when the reader closes the pipe before the document', async () => {
    const ended = await runWithStdoutClosed(['codes'])
    expect(ended).toMatchObject({ code: 0, signal: null, stderr: '' })
  })

  it('reaches a slow reader whole when the document is larger than the pipe holds', async () => {
    // an unknown command is named in the usage document: 120,000 characters, about twice a 64 KiB pipe. A FIFO, not
    // node's own stdio: that is a socket pair, which took 200,000 bytes from a child that then exited unread
    const name = 'x'.repeat(120_000)
    const { code, stdout, stderr } = await runIntoFifo(name, { blocking: true })
    expect(code).toBe(2)
    const document = JSON.parse(stdout)
    expect(document).toMatchObject({ version: 1, errors: [{ code: 'usage' }] })
    expect(document.errors[0].message).toContain(name)
    expect(stderr.split('\n')).toHaveLength(2) // one line, then the final newline
  })

  it('waits out a full non-blocking pipe (EAGAIN) and still delivers the whole document', async () => {
    const name = 'x'.repeat(120_000)
    const { code, stdout } = await runIntoFifo(name, { blocking: false })
    expect(code).toBe(2)
    expect(JSON.parse(stdout).errors[0].message).toContain(name)
  })
})
