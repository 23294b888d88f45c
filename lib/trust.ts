// The person's trust in a repository's .pair-loop.json, by the SHA-256 of its exact content, kept under
// $PAIR_LOOP_HOME/trust.json: a changed file is a new content, untrusted until trusted again.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { ioFailure, writeFileAtomic } from './fsutil.ts'
import { pairLoopHome } from './paths.ts'
import { withLock } from './lock.ts'
import { fail } from './errors.ts'
import { notJson } from './config-issues.ts'

const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))
const TrustFile = v.object({
  version: v.literal(1),
  /** By the config file's absolute path: the content trusted there, and when. */
  trusted: v.record(v.string(), v.object({ sha256: Sha256, at: v.string() })),
})
type TrustFile = v.InferOutput<typeof TrustFile>

export const trustPath = (home = pairLoopHome()) => join(home, 'trust.json')

function readTrust(home: string): TrustFile {
  const path = trustPath(home)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, trusted: {} }
    ioFailure(path, error, 'read')
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    damaged(path, notJson(text, path, (error as Error).message).message)
  }
  const result = v.safeParse(TrustFile, json)
  if (!result.success) damaged(path, `${path} is not a trust record pair-loop wrote`)
  return result.output
}

/** The trust record is pair-loop's own file: the fix is to start it again, trusting what the person still trusts. */
function damaged(path: string, what: string): never {
  fail('config_invalid', `${what}; remove it, then run \`pair-loop trust\` again in each repository you trust`, {
    path,
    keys: [],
    issues: [what],
  })
}

/** The SHA-256 trusted for the config file at `path`, if any. */
export function trustedSha(path: string, home = pairLoopHome()): string | null {
  return readTrust(home).trusted[path]?.sha256 ?? null
}

/** Trust `sha256` for `path`, or take the trust back (`null`); true when that changed anything. */
export async function setTrust(path: string, sha256: string | null, home = pairLoopHome()): Promise<boolean> {
  const file = trustPath(home)
  try {
    mkdirSync(home, { recursive: true })
  } catch (error) {
    ioFailure(home, error)
  }
  return withLock(file, () => {
    const trust = readTrust(home)
    const before = trust.trusted[path]?.sha256 ?? null
    if (before === sha256) return false
    if (sha256 === null) delete trust.trusted[path]
    else trust.trusted[path] = { sha256, at: new Date().toISOString() }
    writeFileAtomic(file, `${JSON.stringify(trust, null, 2)}\n`)
    return true
  })
}
