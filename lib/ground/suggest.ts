// "Did you mean …?": the known word closest to a mistyped one (a command, a flag, a config key), by edit distance.

/** Edits between two words: insertions, deletions, substitutions, and two neighbours swapped (`stauts` → `status`: 1). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The candidate nearest to `word` (case ignored), when it is near enough to be a typo: at most 2 edits, and fewer
 * than half the word's letters (so `ab` never suggests `cd`). Ties go to the earlier candidate.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const typed = word.toLowerCase()
  const limit = Math.min(2, Math.ceil(typed.length / 2) - 1)
  let best: { candidate: string; distance: number } | undefined
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase()
    if (lower === typed) return candidate
    // lengths further apart than the limit are further apart in edits: a 120,000-letter word costs nothing here
    if (Math.abs(lower.length - typed.length) > limit) continue
    const distance = editDistance(typed, lower)
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance }
  }
  return best?.candidate
}

/** ` (did you mean "status"?)` for a near miss, else the empty string: the tail of an error message. */
export function didYouMean(suggestion: string | undefined, quote: (word: string) => string = JSON.stringify): string {
  return suggestion === undefined ? '' : ` (did you mean ${quote(suggestion)}?)`
}
