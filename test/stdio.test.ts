// The process's output is written straight to its file descriptors (lib/stdio.ts): a reader that leaves early or
// reads slowly must neither crash the command nor cut its document.
import { spawn } from 'node:child_process'
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
})
