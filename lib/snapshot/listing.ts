// What `git add -A` would commit, as a list of paths: the index's entries and the untracked files git does not
// ignore. Only the list comes from git (the coder can shape it, as it can shape any commit); every byte comes from
// the disk (snapshot.ts), and what ships is checked against the approved tree anyway (ship.ts).
import { createDigest } from '../ground/digest.ts'
import { nulRecords } from '../ground/exec.ts'
import { plainGitStream, TREE_WALK_TIMEOUT_MS } from '../ground/git.ts'
import { pinned, type RepoGit } from './verified.ts'

export interface Listing {
  /** A digest of both lists exactly as git printed them: the same digest, the same paths (last-snapshot.ts). */
  digest: string
  /** The index's paths, each once, and its gitlinks (mode 160000) with their commit: a submodule not checked out keeps it. */
  cached: () => IndexListing
  /** The untracked files git does not ignore (a repository inside this one as its folder). */
  others: () => string[]
}

export interface IndexListing {
  paths: string[]
  gitlinks: Map<string, string>
  /** The blob id the index lists for each path (its first stage): the coder's to write, so only ever a hint. */
  hints: string[]
}

/**
 * Both lists, asked at once (the untracked walk is git's slow half); read into paths only when they are needed, or
 * handed to `onIndex` as soon as git has listed the index.
 */
export async function listCommittable(git: RepoGit, onIndex?: (listed: IndexListing) => void): Promise<Listing> {
  const options = { env: pinned(git), timeoutMs: TREE_WALK_TIMEOUT_MS }
  const printed = async (args: string[]) => {
    const chunks: Buffer[] = []
    await plainGitStream(git.repo, args, (chunk) => chunks.push(chunk) > 0, options)
    return Buffer.concat(chunks)
  }
  let cached: IndexListing | null = null
  const [index, untracked] = await Promise.all([
    printed(['ls-files', '-z', '--stage']).then((index) => {
      if (onIndex) {
        cached = indexPaths(index)
        onIndex(cached)
      }
      return index
    }),
    printed(['ls-files', '-z', '--others', '--exclude-standard']),
  ])
  const digest = createDigest('sha256').update(index).update('\0\0').update(untracked).digest('hex')
  return { digest, cached: () => (cached ??= indexPaths(index)), others: () => untrackedPaths(untracked) }
}

function indexPaths(printed: Buffer): IndexListing {
  const paths: string[] = []
  const hints: string[] = []
  const gitlinks = new Map<string, string>()
  let last = ''
  // `<mode> <id> <stage>\t<path>` records: decoded at once (a path is never split, NUL cannot be in one)
  for (const record of printed.toString('utf8').split('\0')) {
    const tab = record.indexOf('\t')
    if (tab < 0) continue
    const path = record.slice(tab + 1)
    const space = record.indexOf(' ')
    const oid = record.slice(space + 1, record.indexOf(' ', space + 1))
    if (path !== last) {
      paths.push(path) // an unmerged path has up to three stages, listed one after another
      hints.push(oid)
    }
    last = path
    if (record.startsWith('160000 ')) gitlinks.set(path, oid)
  }
  return { paths, gitlinks, hints }
}

function untrackedPaths(printed: Buffer): string[] {
  const others: string[] = []
  const records = nulRecords((path) => {
    if (path) others.push(path.endsWith('/') ? path.slice(0, -1) : path)
  })
  records.onData(printed)
  records.end()
  return others
}
