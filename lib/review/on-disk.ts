// Files whose bytes on disk are not what git diffs. The repository's git attributes convert a file before git compares
// it: `ident` collapses `$Id: … $` to `$Id$` (whatever is written in between never reaches the diff), `text`/`eol`
// drop carriage returns, `working-tree-encoding` re-encodes. A change made only inside a collapsed `$Id$` is no change
// at all to git. git 2.39 cannot be told to ignore .gitattributes (the working tree's are the coder's), so such files
// are found by hashing them both ways (changes.ts), and shown again as their bytes are: the base's blob against a copy
// of the file, diffed by git outside any repository, where no attribute applies.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { withTempDir } from '../fsutil.ts'
import { gitStreamTry, TREE_WALK_TIMEOUT_MS } from '../git.ts'

/**
 * The diff of `paths` between their blobs in `base` and their bytes on disk, labelled `a/<label><path>` and
 * `b/<label><path>` as the rest of the diff is, written to `onData` (false: stop reading).
 */
export async function diffAsOnDisk(
  repo: string,
  base: string,
  label: string,
  paths: string[],
  onData: (chunk: Buffer) => boolean,
): Promise<void> {
  await withTempDir('pair-loop-on-disk-', async (dir) => {
    mkdirSync(join(dir, 'a'))
    mkdirSync(join(dir, 'b'))
    for (const path of paths) {
      const before = await blobAt(repo, base, path)
      if (before) writeInto(join(dir, 'a', label, path), (file) => writeFileSync(file, before))
      writeInto(join(dir, 'b', label, path), (file) => copyFileSync(join(repo, path), file))
    }
    // outside any repository (no discovery above the folder) and with no attributes file: git diffs the bytes
    const env = { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir), GIT_ATTR_NOSYSTEM: '1' }
    const args = ['-c', 'core.attributesFile=/dev/null', 'diff', '--no-index', '--no-color', '--no-ext-diff']
    await gitStreamTry(dir, [...args, '--no-textconv', '--no-prefix', '--', 'a', 'b'], onData, {
      env,
      timeoutMs: TREE_WALK_TIMEOUT_MS,
    })
  })
}

function writeInto(file: string, write: (file: string) => void): void {
  mkdirSync(dirname(file), { recursive: true })
  write(file)
}

/** The blob's exact bytes (no conversion: cat-file without --filters), or null when base has no such file. */
async function blobAt(repo: string, base: string, path: string): Promise<Buffer | null> {
  const chunks: Buffer[] = []
  const result = await gitStreamTry(repo, ['cat-file', 'blob', `${base}:${path}`], (chunk) => chunks.push(chunk) > 0)
  return result.ok ? Buffer.concat(chunks) : null
}
