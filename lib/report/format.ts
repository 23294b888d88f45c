// How the report writes shares, times and verdicts for a person (money: lib/ground/money.ts, as every view writes it).

/** A share as a whole percentage. */
export const formatPercent = (share: number): string => `${Math.round(share * 100)}%`

/** An ISO time as `2026-11-30 05:39 UTC`. */
export function formatWhen(iso: string | null | undefined): string {
  if (!iso) return '—'
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** A duration in milliseconds as `1.2 s` or `3 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const seconds = Math.round(ms / 1000)
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

const VERDICT_LABELS: Record<string, string> = {
  APPROVED: 'Approved',
  CHANGES_REQUESTED: 'Changes requested',
  ABANDONED: 'Abandoned',
}

/** A verdict or outcome in words (`CHANGES_REQUESTED` → `Changes requested`). */
export const verdictLabel = (verdict: string): string => VERDICT_LABELS[verdict] ?? verdict

/** A finding id as an HTML id (`1.2` → `finding-1-2`). */
export const findingAnchor = (id: string): string => `finding-${id.replace('.', '-')}`
