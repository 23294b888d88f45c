// Small Markdown helpers: fences that text cannot close early, and fence scanning as CommonMark reads it.

/** A backtick fence longer than any backtick run inside `text`, so the text cannot close it early. */
export function fenceFor(text: string, minimum = 3): string {
  let longest = 0
  for (const match of text.matchAll(/`+/g)) longest = Math.max(longest, match[0].length)
  return '`'.repeat(Math.max(minimum, longest + 1))
}

export function fenced(text: string, info = ''): string {
  const fence = fenceFor(text)
  return `${fence}${info}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`
}

/**
 * Code fences as CommonMark reads them: a closing fence is the same character, at least as long, and bare; a backtick
 * fence's info string has no backtick (```VERDICT: APPROVED``` on one line is inline code, not a fence).
 */
export const FENCE = /^\s{0,3}(`{3,}(?![^`]*`)|~{3,})(.*)$/

/** The fence open after `line`, given the one open before it (null: none). */
export function fenceStep(fence: string | null, line: string): string | null {
  const match = FENCE.exec(line)
  if (!match) return fence
  const marker = match[1]!
  if (fence === null) return marker
  return marker[0] === fence[0] && marker.length >= fence.length && !match[2]!.trim() ? null : fence
}

/** The fence a block of lines leaves open, if any. */
export function openFence(lines: string[]): string | null {
  return lines.reduce<string | null>(fenceStep, null)
}
