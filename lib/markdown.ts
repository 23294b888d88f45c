// Small Markdown helpers shared by the review prompt and the PR body.

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
