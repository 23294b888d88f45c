// Where a PR review can comment inline: the new-side lines each file's hunks show (added or context), read from a
// unified diff. Pure.
import { globMatcher } from '../ground/glob.ts'

/** path → the new-side line numbers a review comment may sit on (`side: RIGHT`). */
export function commentableLines(diff: string): Map<string, Set<number>> {
  const lines = new Map<string, Set<number>>()
  let current: Set<number> | null = null
  let next = 0
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      current = null
      continue
    }
    if (line.startsWith('+++ ')) {
      const path = line.slice(4).replace(/^b\//, '').replace(/\t.*$/, '')
      current = path === '/dev/null' ? null : (lines.get(path) ?? new Set())
      if (current) lines.set(path, current)
      continue
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (hunk) {
      next = Number(hunk[1])
      continue
    }
    if (!current || line.startsWith('--- ') || line.startsWith('\\')) continue
    if (line.startsWith('+') || line.startsWith(' ')) current.add(next++)
  }
  return lines
}

/** A diff's stat, one line per file with its added and removed line counts, and the totals. */
export function diffStatText(diff: string): string {
  const files: Array<{ path: string; added: number; removed: number }> = []
  for (const line of diff.split('\n')) {
    const header = /^diff --git a\/(.+?) b\/(.+)$/.exec(line)
    if (header) files.push({ path: header[2]!, added: 0, removed: 0 })
    else if (files.length && line.startsWith('+') && !line.startsWith('+++ ')) files.at(-1)!.added++
    else if (files.length && line.startsWith('-') && !line.startsWith('--- ')) files.at(-1)!.removed++
  }
  const added = files.reduce((sum, f) => sum + f.added, 0)
  const removed = files.reduce((sum, f) => sum + f.removed, 0)
  return [
    ...files.map((f) => ` ${f.path} | +${f.added} -${f.removed}`),
    ` ${files.length} file(s) changed, ${added} insertion(s)(+), ${removed} deletion(s)(-)`,
  ].join('\n')
}

/**
 * A unified diff without the files a glob of `exclude` matches (on either side of a rename): the diff kept, and the
 * paths taken out (the final round names them as excluded by config, as a loop round does).
 */
export function withoutExcluded(diff: string, exclude: readonly string[]): { diff: string; excluded: string[] } {
  if (!exclude.length) return { diff, excluded: [] }
  const matches = globMatcher(exclude)
  const kept: string[] = []
  const excluded: string[] = []
  let dropping = false
  for (const line of diff.split(/(?<=\n)/)) {
    const header = /^diff --git a\/(.+?) b\/(.+?)\n?$/.exec(line)
    if (header) {
      dropping = matches(header[1]!) || matches(header[2]!)
      if (dropping) excluded.push(header[2]!)
    }
    if (!dropping) kept.push(line)
  }
  return { diff: kept.join(''), excluded }
}
