// The process's output, written to its file descriptors directly and synchronously: process.stdout sets up a stream
// (about 2 ms on a pipe, a tenth of a bare Node start), and a document written this way is whole before any exit.
import { writeSync } from 'node:fs'

const pause = new Int32Array(new SharedArrayBuffer(4))

/** Write all of `text`; a full non-blocking pipe is waited out, a closed one (EPIPE: the reader left) drops the rest. */
function writeAll(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text)
  let done = 0
  while (done < bytes.length) {
    try {
      done += writeSync(fd, bytes, done)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EPIPE') return
      if (code !== 'EAGAIN') throw error
      Atomics.wait(pause, 0, 0, 1) // the reader is behind: give it a millisecond
    }
  }
}

export const toStdout = (text: string): void => writeAll(1, text)
export const toStderr = (text: string): void => writeAll(2, text)
