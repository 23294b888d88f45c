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
 * handed to `onIndex` as git lists the index, chunk by chunk (`from`: the first path the chunk added): the hashing
 * threads start on the first paths while git still prints the rest, which waits on this thread to read it.
 */
export async function listCommittable(
  git: RepoGit,
  onIndex?: (listed: IndexListing, from: number) => void,
): Promise<Listing> {
  const options = { env: pinned(git), timeoutMs: TREE_WALK_TIMEOUT_MS }
  const printed = async (args: string[], onChunk?: (chunk: Buffer) => void) => {
    const chunks: Buffer[] = []
    const onData = (chunk: Buffer) => {
      onChunk?.(chunk)
      return chunks.push(chunk) > 0
    }
    await plainGitStream(git.repo, args, onData, options)
    return Buffer.concat(chunks)
  }
  let cached: IndexListing | null = null
  const stages = async () => {
    if (!onIndex) return printed(['ls-files', '-z', '--stage'])
    const listed = emptyListing()
    const records = indexRecords(listed)
    // the paths a chunk's whole records add, handed over (a record cut between two chunks waits for its end)
    const handOver = (read: () => void) => {
      const from = listed.paths.length
      read()
      if (listed.paths.length > from) onIndex(listed, from)
    }
    const index = await printed(['ls-files', '-z', '--stage'], (chunk) => handOver(() => records.onData(chunk)))
    handOver(records.end)
    cached = listed
    return index
  }
  const [index, untracked] = await Promise.all([
    stages(),
    printed(['ls-files', '-z', '--others', '--exclude-standard']),
  ])
  const digest = createDigest('sha256').update(index).update('\0\0').update(untracked).digest('hex')
  return { digest, cached: () => (cached ??= indexPaths(index)), others: () => untrackedPaths(untracked) }
}

const emptyListing = (): IndexListing => ({ paths: [], gitlinks: new Map(), hints: [] })

function indexPaths(printed: Buffer): IndexListing {
  const listed = emptyListing()
  const records = indexRecords(listed)
  records.onData(printed)
  records.end()
  return listed
}

/** `<mode> <id> <stage>\t<path>` records of `ls-files --stage` into `listed`, as they come. */
function indexRecords(listed: IndexListing): ReturnType<typeof nulRecords> {
  let last = ''
  return nulRecords((record) => {
    const tab = record.indexOf('\t')
    if (tab < 0) return
    const path = record.slice(tab + 1)
    const space = record.indexOf(' ')
    const oid = record.slice(space + 1, record.indexOf(' ', space + 1))
    if (path !== last) {
      listed.paths.push(path) // an unmerged path has up to three stages, listed one after another
      listed.hints.push(oid)
    }
    last = path
    if (record.startsWith('160000 ')) listed.gitlinks.set(path, oid)
  })
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
