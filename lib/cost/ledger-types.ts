// What the run's ledger holds: spend per role, round and model, in tokens and USD, and every source read or skipped.
import type { ModelPrice } from '../run/config.ts'
import type { HighWater } from '../run/state.ts'
import type { ReviewerTool } from '../run/vendors.ts'
import type { Tokens } from './pricing.ts'
import type { Skip } from './transcript-cache-file.ts'

export interface LedgerOptions {
  env?: NodeJS.ProcessEnv
  /** The command's config prices (config `pricing`), over the embedded table. */
  pricing: Record<string, ModelPrice>
  /** Keep per-file read offsets under $PAIR_LOOP_HOME/cache (default true). */
  cache?: boolean
}

export interface ModelCost {
  usd: number
  tokens: Tokens
}

export interface RoleCost {
  usd: number
  tokens: Tokens
  models: Record<string, ModelCost>
}

export interface RoundCost {
  n: number
  /** The round being worked on now (its coder spend is still growing). */
  in_progress: boolean
  usd: number
  coder: RoleCost & { from: string; to: string | null }
  reviewer: RoleCost & { calls: number; failed_calls: number }
}

export interface Source {
  role: 'coder' | 'reviewer'
  kind: ReviewerTool | 'state'
  session?: string | null
  round?: number
  path: string | null
  status: 'read' | 'missing' | 'unreadable' | 'recorded' | 'unmeasured'
  /** A coder transcript read where the environment of `start` pointed, not in the person's folder (both are counted). */
  location?: 'start'
  why?: string
  /** Transcript files: bytes counted (whole lines), of an unfinished last line, and read by this check. */
  bytes?: number
  pending_bytes?: number
  read_bytes?: number
  lines?: number
  entries?: number
  skipped?: Skip[]
  /** Reviewer calls: which figure `usd` is (usage, reported, transcript) and the cross-checks. */
  cost_source?: string
  usd?: number | null
  transcript_usd?: number | null
  reported_usd?: number | null
}

export interface Ledger {
  run_id: string
  spent_usd: number
  by_role: { coder: RoleCost; reviewer: RoleCost & { calls: number; failed_calls: number } }
  rounds: RoundCost[]
  by_model: Record<string, ModelCost & { role: 'coder' | 'reviewer' | 'both' }>
  unpriced_models: string[]
  /** Models with usage in the run's window that nothing priced (counted as $0): with a limit, the brake refuses. */
  unpriced_usage: string[]
  /** Every figure measured: no unknown model, no missing or unreadable transcript, no reviewer call without a cost. */
  complete: boolean
  sources: Source[]
  /** Each coder session's USD as its transcripts show it now (by window start, model): what high-water marks take in. */
  seen: HighWater
}
