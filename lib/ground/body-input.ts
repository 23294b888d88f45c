// Bodies given as input (summaries, replies) come from a file or stdin, never argv: checked for presence, size and UTF-8.
import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { context } from './context.ts'
import { fail } from './errors.ts'
import { checkInputFile } from './file-flags.ts'
import { stripControl } from './text.ts'

export const MAX_BODY_BYTES = 64 * 1024

export async function readBody(
  source: string,
  flag: string,
  { cwd = context().cwd, stdin }: { cwd?: string; stdin: AsyncIterable<Uint8Array | string> },
): Promise<string> {
  const bytes = source === '-' ? await readStdin(stdin, flag) : readBodyFile(resolve(cwd, source), flag)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    fail('usage', `${describe(source)} given to --${flag} is not valid UTF-8`, { flag: `--${flag}`, file: source })
  }
  if (!text.trim())
    fail('usage', `${describe(source)} given to --${flag} is empty`, { flag: `--${flag}`, file: source })
  return stripControl(text).trimEnd() // agent text: nothing invisible or escaping reaches state, HANDOFF.md or JSON
}

const describe = (source: string) => (source === '-' ? 'stdin' : `file ${source}`)

function tooBig(source: string, flag: string, size: number): never {
  fail('usage', `${describe(source)} given to --${flag} has ${size} bytes; the limit is ${MAX_BODY_BYTES} (64 KiB)`, {
    flag: `--${flag}`,
    file: source,
    bytes: size,
    limit: MAX_BODY_BYTES,
  })
}

function readBodyFile(path: string, flag: string): Uint8Array {
  checkInputFile(path, `--${flag}`) // lstat first: a FIFO is never opened
  let size: number
  try {
    const stat = statSync(path)
    if (!stat.isFile())
      fail('usage', `${path} given to --${flag} is not a regular file`, { flag: `--${flag}`, file: path })
    size = stat.size
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT')
      fail('usage', `file ${path} given to --${flag} does not exist`, { flag: `--${flag}`, file: path })
    throw error
  }
  if (size > MAX_BODY_BYTES) tooBig(path, flag, size)
  try {
    return readFileSync(path)
  } catch (error) {
    fail('usage', `cannot read ${path} given to --${flag}: ${(error as Error).message}`, {
      flag: `--${flag}`,
      file: path,
    })
  }
}

async function readStdin(stdin: AsyncIterable<Uint8Array | string>, flag: string): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    const buffer =
      typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    size += buffer.length
    if (size > MAX_BODY_BYTES) tooBig('-', flag, size)
    chunks.push(buffer)
  }
  return Buffer.concat(chunks)
}
