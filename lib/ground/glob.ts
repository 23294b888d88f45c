// The glob dialect of `pair_loop.review_exclude` (docs/config.md), matched against a changed path from the repository's
// top, `/`-separated. Small on purpose, so the person can predict it: `*` and `?` within one name, `**` for any folders,
// a pattern without `/` matches a name at any depth, and a pattern that matches a folder matches everything below it.
// Every other character is itself (no braces, classes or negation); matching is case-sensitive and dot files are not
// special. Written here rather than taken from a package: the dialect is ours to document, and no dependency is added.

/** Why a glob is not one: null when it is. */
export function globProblem(pattern: string): string | null {
  const body = pattern.replace(/^\//, '').replace(/\/$/, '')
  if (!body) return 'a glob that names something'
  const parts = body.split('/')
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return 'a glob without empty, . or .. names'
  return null
}

/** One regular expression for a glob: anchored at the top when it holds a `/`, else at any depth. */
function globRegex(pattern: string): RegExp {
  const anchored = pattern.replace(/\/$/, '').includes('/')
  const parts = pattern.replace(/^\//, '').replace(/\/$/, '').split('/')
  const source = parts
    .map((part, i) => {
      const last = i === parts.length - 1
      if (part === '**') return last ? '.*' : '(?:[^/]+/)*'
      const name = part
        .split('')
        .map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
        .join('')
      return last ? name : `${name}/`
    })
    .join('')
  return new RegExp(`^${anchored ? '' : '(?:[^/]+/)*'}${source}$`)
}

/** Whether a path or one of its folders matches one of `patterns` (none: nothing matches). */
export function globMatcher(patterns: readonly string[]): (path: string) => boolean {
  if (!patterns.length) return () => false
  const regexes = patterns.map(globRegex)
  return (path) => {
    const parts = path.split('/')
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join('/')
      if (regexes.some((regex) => regex.test(prefix))) return true
    }
    return false
  }
}
