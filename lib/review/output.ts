// Reading what a reviewer printed: the vendor's own format (lib/agents/), else plain text; and what no review is.
import { stripControl } from '../ground/text.ts'
import { AGENT_MODULES } from '../agents/registry.ts'
import type { ReviewerReply } from '../agents/reply.ts'

/** The output in the first vendor format it parses as (a custom command may print any of them), else as text. */
export function parseReviewerOutput(stdout: string, lastMessage?: string | null): ReviewerReply {
  for (const agent of Object.values(AGENT_MODULES)) {
    const reply = agent.parse(stdout, lastMessage)
    if (reply) return reply
  }
  return {
    format: 'text',
    text: stdout.trim() ? stdout : null,
    error: null,
    session_id: null,
    model: null,
    usage: null,
    reported_usd: null,
  }
}

/** A call that printed nothing on stdout: the error it reported on stderr in a vendor's format, or null. */
export function parseReviewerError(stderr: string): ReviewerReply | null {
  for (const agent of Object.values(AGENT_MODULES)) {
    const reply = agent.parseError(stderr)
    if (reply) return reply
  }
  return null
}

const TROUBLE =
  /(usage limit|rate[ _-]?limit|quota|insufficient[_ ]quota|\b429\b|\b401\b|\b403\b|unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|api[ _-]?key not valid|authentication[_ ]error|not logged in|please (log|sign) in|overloaded|\b529\b|credit balance)/i

/** A line of the reviewer's output that reads like an API, auth or quota failure (checked only when no verdict came). */
export function troubleLine(text: string): string | null {
  for (const line of stripControl(text).split('\n')) if (TROUBLE.test(line)) return line.trim().slice(0, 500)
  return null
}

/** Bytes that are not a review at all: invalid UTF-8 or NUL bytes. */
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return true
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return false
  } catch {
    return true
  }
}
