// What the ledger did not measure: a role or a round whose $0 is an absence of records, not a figure. A coder always
// works between two coder-done calls, so a round window with no coder response in any transcript is not "free".
import type { Ledger, Source } from './ledger-types.ts'

export type Role = 'coder' | 'reviewer'

export interface Unmeasured {
  /** `none`: nothing of the role's spend was found; `partly`: some was, but a source is missing (the figure may be low). */
  roles: Array<{ role: Role; how: 'none' | 'partly'; why: string }>
  /** Rounds whose figure for the role is no measurement. */
  rounds: Array<{ n: number; role: Role; why: string }>
}

const GAPS: ReadonlySet<Source['status']> = new Set(['missing', 'unreadable', 'unmeasured'])

const hasUsage = (role: { models: Record<string, unknown> }) => Object.keys(role.models).length > 0

/** The roles and rounds of the ledger that are not measured (empty lists: every figure is one). */
export function unmeasuredOf(ledger: Ledger): Unmeasured {
  const roles: Unmeasured['roles'] = []
  const rounds: Unmeasured['rounds'] = []
  const coderGaps = ledger.sources.filter((s) => s.role === 'coder' && GAPS.has(s.status))
  const noCoder = 'no coder response in any transcript found for this run'
  if (!hasUsage(ledger.by_role.coder)) roles.push({ role: 'coder', how: 'none', why: coderGaps[0]?.why ?? noCoder })
  else if (coderGaps.length) roles.push({ role: 'coder', how: 'partly', why: coderGaps[0]!.why ?? 'a transcript' })

  const reviewerSources = ledger.sources.filter((s) => s.role === 'reviewer')
  const reviewerGaps = reviewerSources.filter((s) => GAPS.has(s.status))
  if (reviewerGaps.length) {
    const how = reviewerGaps.length === reviewerSources.length ? 'none' : 'partly'
    roles.push({ role: 'reviewer', how, why: reviewerGaps[0]!.why ?? 'a reviewer call reported no cost' })
  }

  for (const round of ledger.rounds) {
    if (!hasUsage(round.coder)) rounds.push({ n: round.n, role: 'coder', why: 'no coder response in its window' })
    const gap = reviewerGaps.find((s) => s.round === round.n)
    if (gap) rounds.push({ n: round.n, role: 'reviewer', why: gap.why ?? 'a reviewer call reported no cost' })
  }
  return { roles, rounds }
}

/** Every figure is a measurement: priced, no source missing (`complete`), no role or round without records. */
export function fullyMeasured(cost: { complete: boolean; unmeasured: Unmeasured }): boolean {
  return cost.complete && cost.unmeasured.roles.length === 0 && cost.unmeasured.rounds.length === 0
}

/** Is this round's figure for the role a measurement? */
export const roundMeasured = (unmeasured: Unmeasured, n: number, role: Role) =>
  !unmeasured.rounds.some((r) => r.n === n && r.role === role)

/** Is the role's total a measurement (possibly low when `partly`)? */
export const roleMeasured = (unmeasured: Unmeasured, role: Role) =>
  !unmeasured.roles.some((r) => r.role === role && r.how === 'none')
