// Text kept up to a byte cap while everything offered is counted, cut at a whole line: the review diff and stat.

/** Text kept up to a byte cap while everything offered is counted; `pending` goes in before the first byte that follows. */
export class Capped {
  private readonly parts: Buffer[] = []
  private kept = 0
  bytes = 0
  pending = ''
  constructor(private readonly cap: number) {}

  get truncated(): boolean {
    return this.bytes > this.cap
  }

  /** False once past the cap: the reader may stop. */
  push(chunk: Buffer): boolean {
    if (chunk.length === 0) return !this.truncated
    if (this.pending) {
      const header = Buffer.from(this.pending)
      this.pending = ''
      this.push(header)
    }
    this.bytes += chunk.length
    const room = this.cap - this.kept
    if (room > 0) {
      const part = Buffer.from(chunk.subarray(0, room))
      this.parts.push(part)
      this.kept += part.length
    }
    return !this.truncated
  }

  text(): string {
    const kept = Buffer.concat(this.parts)
    return this.truncated ? cutAtLine(kept, this.cap) : kept.toString('utf8')
  }
}

/** At most `maxBytes` of UTF-8, ending at a whole line (or, for one long line, at a whole character). */
export function cutAtLine(data: Buffer, maxBytes: number): string {
  const head = data.subarray(0, maxBytes)
  const lastNewline = head.lastIndexOf(10)
  if (lastNewline > 0) return head.subarray(0, lastNewline + 1).toString('utf8')
  return head.toString('utf8').replace(/\uFFFD$/, '')
}
