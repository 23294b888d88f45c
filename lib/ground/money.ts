// Money as a person reads it, in every view (--text, the report, the PR body, stderr lines): one precision everywhere.

/** Decimals shown: a tenth of a cent, because a round often costs less than a cent. */
export const USD_DECIMALS = 4

/** `$0.0567`, `$5.0000`, `$123.4500`; `missing` (a dash by default) for a figure that is not a number. */
export function formatUsd(value: unknown, missing = '—'): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return missing
  const fixed = value.toFixed(USD_DECIMALS)
  return `$${/^-0\.0*$/.test(fixed) ? fixed.slice(1) : fixed}` // a rounding crumb below zero is $0.0000, not -$0
}
