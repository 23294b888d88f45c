// `codex exec --json`: its JSON lines, from thread.started to turn.completed (or the failure).
import type { Usage } from '../run/state.ts'
import { type Loose, type ReviewerReply, num, str } from './reply.ts'

/** `codex exec --json`: thread.started, items, turn.completed with usage, or error / turn.failed. */
export function parseCodexJsonl(stdout: string, lastMessage?: string | null): ReviewerReply | null {
  const events: Array<Loose> = []
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim()
    if (!trimmed.startsWith('{')) continue
    try {
      const event = JSON.parse(trimmed)
      if (event && typeof event === 'object' && typeof event.type === 'string') events.push(event)
    } catch {}
  }
  const known = new Set([
    'thread.started',
    'turn.started',
    'turn.completed',
    'turn.failed',
    'item.completed',
    'item.started',
    'item.updated',
    'error',
  ])
  if (!events.some((e) => known.has(e.type) && e.type !== 'error')) return null
  let threadId: string | null = null
  let text: string | null = null
  let usage: Usage | null = null
  let failure: string | null = null
  let completed = false
  for (const event of events) {
    if (event.type === 'thread.started') threadId = str(event.thread_id)
    if (event.type === 'item.completed' && event.item?.type === 'agent_message') text = str(event.item.text) ?? text
    if (event.type === 'turn.completed') {
      completed = true
      if (event.usage && typeof event.usage === 'object') usage = codexUsage(event.usage)
    }
    if (event.type === 'turn.failed') failure = str(event.error?.message) ?? 'codex reported turn.failed'
  }
  if (!completed && !failure) {
    const lastError = events.filter((e) => e.type === 'error').at(-1)
    if (lastError) failure = str(lastError.message) ?? 'codex reported an error'
  }
  const final = text ?? (lastMessage?.trim() ? lastMessage : null)
  return {
    format: 'codex-jsonl',
    text: failure ? null : final,
    error: failure ?? (completed ? null : 'codex ended without turn.completed'),
    session_id: threadId,
    model: null,
    usage,
    reported_usd: null,
  }
}

function codexUsage(raw: Loose): Usage {
  return {
    input_tokens: num(raw.input_tokens),
    output_tokens: num(raw.output_tokens),
    cache_creation_input_tokens: num(raw.cache_write_input_tokens),
    cache_read_input_tokens: 0,
    cache_write_5m_tokens: 0,
    cache_write_1h_tokens: 0,
    cached_input_tokens: num(raw.cached_input_tokens),
    reasoning_output_tokens: num(raw.reasoning_output_tokens),
  }
}
