// Text files the repository's git attributes (`-diff`, `binary`, a `diff=` driver) make git show as "Binary files
// differ": the change could blind its reviewer with one line in .gitattributes or .git/info/attributes, which git
// 2.39 cannot be told to ignore. Found from the diff itself and told apart by git's own test (a NUL in the first 8000
// bytes), so they can be shown again as text.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'

const BINARY_LINE = /^Binary files (?:a\/(.+)|\/dev\/null) and (?:b\/(.+)|\/dev\/null) differ$/gm

/**
 * Paths (from the repository's top) git called binary in `patch` whose bytes on disk are text, up to `maxBytes` each
 * (a bigger file is named only on purpose: git would hold it whole to diff it).
 */
export function textShownAsBinary(repo: string, label: string, patch: string, maxBytes: number): string[] {
  const paths: string[] = []
  for (const match of patch.matchAll(BINARY_LINE)) {
    const shown = match[2] ?? match[1] // the file as it is now (or, deleted, as it was)
    if (!shown?.startsWith(label)) continue
    const path = shown.slice(label.length)
    if (match[2] && isText(join(repo, path), maxBytes) && !paths.includes(path)) paths.push(path)
  }
  return paths
}

/** git's own test: a NUL byte in the first 8000 bytes makes a file binary. */
function isText(file: string, maxBytes: number): boolean {
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    if (fstatSync(fd).size > maxBytes) return false
    const head = Buffer.alloc(8000)
    const read = readSync(fd, head, 0, head.length, 0)
    return !head.subarray(0, read).includes(0)
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
