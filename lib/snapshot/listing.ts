// What `git add -A` would commit, as a list of paths: the index's entries and the untracked files git does not
// ignore. Only the list comes from git (the coder can shape it, as it can shape any commit); every byte comes from
// the disk (snapshot.ts), and what ships is checked against the approved tree anyway (ship.ts).
import { nulRecords } from '../exec.ts'
import { plainGitStream, TREE_WALK_TIMEOUT_MS } from '../git.ts'
import { pinned, type RepoGit } from './verified.ts'

export interface Listing {
  /** The index's paths, each once, and its gitlinks (mode 160000) with their commit: a submodule not checked out keeps it. */
  cached: Promise<{ paths: string[]; gitlinks: Map<string, string> }>
  /** The untracked files git does not ignore (a repository inside this one as its folder). */
  others: Promise<string[]>
}

/** Both lists, asked at once: the untracked walk (git's slow half) goes on while the index's paths are read. */
export function listCommittable(git: RepoGit): Listing {
  const options = { env: pinned(git), timeoutMs: TREE_WALK_TIMEOUT_MS }
  const paths: string[] = []
  const gitlinks = new Map<string, string>()
  let last = ''
  const cachedRecords = nulRecords((record) => {
    const tab = record.indexOf('\t')
    if (tab < 0) return
    const path = record.slice(tab + 1)
    if (path !== last) paths.push(path) // an unmerged path has up to three stages, listed one after another
    last = path
    if (record.startsWith('160000 ')) gitlinks.set(path, record.slice(7, record.indexOf(' ', 7)))
  })
  const others: string[] = []
  const otherRecords = nulRecords((path) => {
    if (path) others.push(path.endsWith('/') ? path.slice(0, -1) : path)
  })
  return {
    cached: plainGitStream(git.repo, ['ls-files', '-z', '--stage'], cachedRecords.onData, options).then(() => {
      cachedRecords.end()
      return { paths, gitlinks }
    }),
    others: plainGitStream(
      git.repo,
      ['ls-files', '-z', '--others', '--exclude-standard'],
      otherRecords.onData,
      options,
    ).then(() => {
      otherRecords.end()
      return others
    }),
  }
}
