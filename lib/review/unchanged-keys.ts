// Which findings of a review the previous review raised too, on files nobody changed in between: what a stalemate is
// made of (run-queries' `stalemate` counts them). The files are compared by the two reviews' snapshot manifests.
import { findingKey, type ParsedFinding } from '../run/grammar.ts'
import { readManifest } from '../snapshot/manifest.ts'
import type { RunState } from '../run/state.ts'
import { roundApproved } from '../run/gated-review.ts'

/**
 * The keys of `findings` (this review, on `tree`) that the run's previous review also raised, whose named file is the
 * same in both snapshots (a finding naming no file: the whole tree the same). Unknown bytes never count as unchanged.
 */
export function unchangedKeys(run: RunState, findings: ParsedFinding[], tree: string | null, home: string): string[] {
  const previous = [...run.rounds].reverse().find((round) => round.reviewer)?.reviewer
  if (!previous?.tree || !tree || roundApproved(previous)) return []
  const before = new Set(previous.findings.map((finding) => finding.key))
  const manifests = previous.tree === tree ? null : [readManifest(home, previous.tree), readManifest(home, tree)]
  const same = (path: string | null): boolean => {
    if (!manifests) return true
    const [a, b] = manifests
    if (!a || !b || path === null) return false
    const x = a.get(path)
    const y = b.get(path)
    return x?.oid === y?.oid && x?.mode === y?.mode
  }
  const keys = findings.filter((finding) => before.has(findingKey(finding)) && same(finding.path))
  return [...new Set(keys.map(findingKey))]
}
