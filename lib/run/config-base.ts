// Whether the repository's config is what git tracks at the run's base: its bytes, hashed as a git blob, must be the
// blob the base commit's tree lists for it. The commit and the tree are read as raw objects and checked against their
// ids here, because git does not check a loose object's hash when it reads one, and the coder can write .git/objects.
import { fail } from '../ground/errors.ts'
import { plainGitStream } from '../ground/git.ts'
import { gitObjectId } from '../ground/git-object-id.ts'

/** The blob id of the regular file `name` at the top of `base`'s tree, every object read checked; null when none. */
export async function blobAtBase(repo: string, base: string, name: string): Promise<string | null> {
  const commit = await verifiedObject(repo, base, 'commit')
  const tree = /^tree ([0-9a-f]{40}|[0-9a-f]{64})\n/.exec(commit.toString('latin1'))?.[1]
  if (!tree) damaged(repo, base, 'commit', 'it names no tree')
  return treeEntry(await verifiedObject(repo, tree, 'tree'), name, base.length / 2)
}

async function verifiedObject(repo: string, id: string, type: 'commit' | 'tree'): Promise<Buffer> {
  const chunks: Buffer[] = []
  await plainGitStream(repo, ['cat-file', type, id], (chunk) => chunks.push(chunk) > 0) // the raw object: nothing converted
  const bytes = Buffer.concat(chunks)
  if (gitObjectId(type, bytes, id) !== id) damaged(repo, id, type, 'its content does not hash to its id')
  return bytes
}

/** A tree object is `<mode> <name>\0<raw id>` entries; only a regular file's (100644, 100755) counts. */
function treeEntry(tree: Buffer, name: string, idBytes: number): string | null {
  for (let at = 0; at < tree.length; ) {
    const space = tree.indexOf(0x20, at)
    const nul = tree.indexOf(0, space)
    if (space < 0 || nul < 0) break
    const mode = tree.toString('latin1', at, space)
    const entry = tree.toString('utf8', space + 1, nul)
    const id = tree.toString('hex', nul + 1, nul + 1 + idBytes)
    if (entry === name) return mode === '100644' || mode === '100755' ? id : null
    at = nul + 1 + idBytes
  }
  return null
}

function damaged(repo: string, id: string, type: string, why: string): never {
  fail('git_error', `the ${type} ${id} in ${repo}/.git is damaged or was rewritten (${why}); run \`git fsck\``, {
    object: id,
    type,
  })
}
