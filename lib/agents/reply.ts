// What a reviewer CLI's output reads as, whichever vendor printed it, and the probes its parsers share.
import type { Usage } from '../run/state.ts'

/** Parsed JSON from a reviewer CLI: read field by field, each value checked where it is used. */
// biome-ignore lint/suspicious/noExplicitAny: untrusted JSON is probed key by key; every use checks the type
export type Loose = Record<string, any>

export type ModelUsage = Record<
  string,
  {
    inputTokens?: number
    outputTokens?: number
    cacheReadInputTokens?: number
    cacheCreationInputTokens?: number
    costUSD?: number
  }
>

export interface ReviewerReply {
  format: 'claude-json' | 'codex-jsonl' | 'gemini-json' | 'text'
  /** The review text, or null when there was none. */
  text: string | null
  /** The reviewer's own error (API, auth, quota, turn failure), or null. */
  error: string | null
  session_id: string | null
  model: string | null
  usage: Usage | null
  reported_usd: number | null
  model_usage?: ModelUsage
  /** Claude's `structured_output` (the object a `--json-schema` call answered with), unchecked; absent without one. */
  structured?: unknown
}

export const num = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0
export const str = (value: unknown) => (typeof value === 'string' && value ? value : null)
