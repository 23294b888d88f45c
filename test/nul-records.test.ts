// nulRecords (lib/ground/exec.ts): git's NUL-separated output read as it streams, each record whole however the
// chunks fall, a UTF-8 character cut between two chunks included.
import { describe, expect, it } from 'vitest'
import { nulRecords } from '../lib/ground/exec.ts'

function read(chunks: Buffer[]): string[] {
  const records: string[] = []
  const reader = nulRecords((record) => records.push(record))
  for (const chunk of chunks) reader.onData(chunk)
  reader.end()
  return records
}

describe('nulRecords', () => {
  const printed = Buffer.from('a.txt\0dir/é ☃.md\0\0new\nline\0last', 'utf8')

  it('gives every record whole, in order, empty ones and an unterminated last one too', () => {
    expect(read([printed])).toEqual(['a.txt', 'dir/é ☃.md', '', 'new\nline', 'last'])
  })

  it('gives the same records however the output is cut, inside a record or a character', () => {
    for (let cut = 0; cut <= printed.length; cut++)
      for (const step of [1, 3])
        expect(read([printed.subarray(0, cut), ...chunksOf(printed.subarray(cut), step)])).toEqual(read([printed]))
  })
})

function chunksOf(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = []
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size))
  return chunks
}
