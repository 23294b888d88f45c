// The id git gives an object, computed here: a repository's object files are the coder's to write, and git does not
// check a loose object's hash when it reads one, so an id is checked against the bytes, never taken from git.
import { hexDigest } from './digest.ts'

/** The object id of `bytes` as a git `type`, in the hash of the repository's ids (`like`: 40 hex digits SHA-1, 64 SHA-256). */
export function gitObjectId(type: 'blob' | 'tree' | 'commit', bytes: Uint8Array, like: string): string {
  const header = Buffer.from(`${type} ${bytes.length}\0`)
  return hexDigest(Buffer.concat([header, bytes]), like.length === 64 ? 'sha256' : 'sha1')
}
