// What `git add -A` would commit, as a list of paths: the index's entries and the untracked files git does not
// ignore. Only the list comes from git (the coder can shape it, as it can shape any commit); every byte comes from
// the disk (snapshot.ts), and what ships is checked against the approved tree anyway (ship.ts).
import { nulRecords } from '../exec.ts'
import { safeGitStream, TREE_WALK_TIMEOUT_MS } from '../git.ts'
import { pinned, type RepoGit } from './verified.ts'

export interface Listed {
  /** Paths from the repository's top, each once. */
  paths: string[]
  /** The index's gitlinks (mode 160000) with the commit it records: a submodule not checked out keeps it. */
  gitlinks: Map<string, string>
}

export async function listCommittable(git: RepoGit): Promise<Listed> {
  const paths = new Set<string>()
  const gitlinks = new Map<string, string>()
  const cached = nulRecords((record) => {
    const entry = /^(\d{6}) ([0-9a-f]+) \d\t(.*)$/s.exec(record)
    if (!entry) return
    paths.add(entry[3]!)
    if (entry[1] === '160000') gitlinks.set(entry[3]!, entry[2]!)
  })
  const others = nulRecords((path) => {
    if (path) paths.add(path.replace(/\/$/, '')) // `dir/`: a repository of its own inside this one
  })
  const options = { env: pinned(git), timeoutMs: TREE_WALK_TIMEOUT_MS }
  await Promise.all([
    safeGitStream(git.repo, ['ls-files', '-z', '--stage'], cached.onData, options),
    safeGitStream(git.repo, ['ls-files', '-z', '--others', '--exclude-standard'], others.onData, options),
  ])
  cached.end()
  others.end()
  return { paths: [...paths], gitlinks }
}
