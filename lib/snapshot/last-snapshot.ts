// The last snapshot of a repository, kept beside its private index under $PAIR_LOOP_HOME: when git lists the same paths
// (byte for byte) against the same base and the private index is the one written with it, only the files git's stat
// check names (and those too recent to be entered) are read again; everything else is the last snapshot's.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import * as v from 'valibot'
import { writeFileAtomic } from '../ground/fsutil.ts'

const Leaf = v.object({ mode: v.picklist(['100644', '100755', '120000', '160000', '40000']), oid: v.string() })

const LastSnapshotSchema = v.object({
  version: v.literal(1),
  base_tree: v.string(),
  /** A digest of what git listed (the index's paths and the untracked ones), exactly as it printed them. */
  listing: v.string(),
  /** The private index's own checksum (its last bytes) when this snapshot was taken: another snapshot's index is not this one's. */
  index: v.string(),
  tree: v.string(),
  changes: v.array(v.object({ path: v.string(), before: v.nullable(Leaf), after: v.nullable(Leaf) })),
  kinds: v.record(v.string(), v.picklist(['text', 'nul-text', 'binary', 'big'])),
  skipped: v.array(v.object({ path: v.string(), what: v.string() })),
  /** Paths not in the private index (changed too recently to trust, or not a file): always looked at again. */
  unindexed: v.array(v.string()),
})

export type LastSnapshot = v.InferOutput<typeof LastSnapshotSchema>

const recordFile = (indexFile: string) => `${indexFile}.last.json`

export function readLastSnapshot(indexFile: string): LastSnapshot | null {
  try {
    const parsed = v.safeParse(LastSnapshotSchema, JSON.parse(readFileSync(recordFile(indexFile), 'utf8')))
    return parsed.success ? parsed.output : null
  } catch {
    return null
  }
}

export function writeLastSnapshot(indexFile: string, last: LastSnapshot): void {
  writeFileAtomic(recordFile(indexFile), JSON.stringify(last), 0o600, { durable: false })
}

/** The private index's trailing checksum (git's own, over all its bytes), read from its end; '' when there is none. */
export function indexChecksum(indexFile: string, idBytes: number): string {
  let fd: number
  try {
    fd = openSync(indexFile, 'r')
  } catch {
    return ''
  }
  try {
    const size = fstatSync(fd).size
    if (size < idBytes) return ''
    const tail = Buffer.alloc(idBytes)
    readSync(fd, tail, 0, idBytes, size - idBytes)
    return tail.toString('hex')
  } finally {
    closeSync(fd)
  }
}
