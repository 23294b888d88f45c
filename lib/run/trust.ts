// The person's trust in a repository's .pair-loop.json, by the SHA-256 of its exact content, and in the files inside
// the working tree that its commands run, by theirs; kept under $PAIR_LOOP_HOME/trust.json: a changed file is a new
// content, untrusted until trusted again.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { ioFailure, readRegularFile, writeFileAtomic } from '../ground/fsutil.ts'
import { context, nowIso } from '../ground/context.ts'
import { withLock } from '../ground/lock.ts'
import { fail, isPairLoopError } from '../ground/errors.ts'
import { notJson } from './config-issues.ts'

const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))
const TrustFile = v.object({
  version: v.literal(1),
  /** By the config file's absolute path: the content trusted there, and when. */
  trusted: v.record(v.string(), v.object({ sha256: Sha256, at: v.string() })),
  /** By the repository's top level: each file inside its working tree that a trusted command names, by SHA-256
   * (absent from records written before programs were trusted: none is trusted there). */
  programs: v.optional(v.record(v.string(), v.object({ files: v.record(v.string(), Sha256), at: v.string() })), {}),
})
type TrustFile = v.InferOutput<typeof TrustFile>

export const trustPath = (home = context().home) => join(home, 'trust.json')

function readTrust(home: string): TrustFile {
  const path = trustPath(home)
  let bytes: Buffer | undefined
  try {
    bytes = readRegularFile(path, (kind) => damaged(path, `${path} is ${kind}, not a regular file`))
  } catch (error) {
    if (isPairLoopError(error)) throw error
    ioFailure(path, error, 'read')
  }
  if (bytes === undefined) return { version: 1, trusted: {}, programs: {} }
  const text = bytes.toString('utf8')
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
export function trustedSha(path: string, home = context().home): string | null {
  return readTrust(home).trusted[path]?.sha256 ?? null
}

/** The files inside `repo`'s working tree that the person trusted its commands to run, by SHA-256. */
export function trustedPrograms(repo: string, home = context().home): Record<string, string> {
  return readTrust(home).programs[repo]?.files ?? {}
}

/** In-tree files a trusted config's commands name: their repository and each file's SHA-256 (none: `files` null). */
export interface ProgramTrust {
  repo: string
  files: Record<string, string> | null
}

/**
 * Trust `sha256` for `path`, or take the trust back (`null`); with `programs`, the same for the in-tree files its
 * commands name. True when that changed anything.
 */
export async function setTrust(
  path: string,
  sha256: string | null,
  home = context().home,
  programs?: ProgramTrust,
): Promise<boolean> {
  const file = trustPath(home)
  try {
    mkdirSync(home, { recursive: true })
  } catch (error) {
    ioFailure(home, error)
  }
  return withLock(file, () => {
    const trust = readTrust(home)
    const before = JSON.stringify(trust)
    const at = nowIso()
    if (sha256 === null) delete trust.trusted[path]
    else if (trust.trusted[path]?.sha256 !== sha256) trust.trusted[path] = { sha256, at }
    if (programs?.files === null) delete trust.programs[programs.repo]
    else if (programs && !sameFiles(trust.programs[programs.repo]?.files, programs.files))
      trust.programs[programs.repo] = { files: programs.files, at }
    if (JSON.stringify(trust) === before) return false
    writeFileAtomic(file, `${JSON.stringify(trust, null, 2)}\n`)
    return true
  })
}

const sameFiles = (a: Record<string, string> | undefined, b: Record<string, string>) =>
  a !== undefined && JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort())
