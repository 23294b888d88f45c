// Objects read from the user's repository, each checked against its id. git does not verify a loose object when it
// reads one, and the coder can write .git/objects: a base blob rewritten to hold the change would hide it from the
// diff. So every object pair-loop takes from the repository is hashed again here; a mismatch is an error naming it.
import { context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'
import { Feed } from '../ground/exec.ts'
import { plainGitStream } from '../ground/git.ts'
import { type ObjectFormat, type ObjectType, objectId } from './objects.ts'

export interface RepoGit {
  /** The work tree, pinned: `core.worktree` in the coder's config never moves it. */
  repo: string
  gitDir: string
  format: ObjectFormat
}

/** The environment that pins the repository on every call (GIT_DIR and GIT_WORK_TREE beat core.worktree). */
export const pinned = (git: RepoGit, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...cleanGitEnv(),
  GIT_DIR: git.gitDir,
  GIT_WORK_TREE: git.repo,
  ...extra,
})

/** The environment without any GIT_* variable of the caller's (GIT_DIR, GIT_INDEX_FILE… would move what git reads). */
export function cleanGitEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(context().env).filter(([key]) => !key.startsWith('GIT_')))
}

/** GIT_* variables git reads only to name a commit's author and committer. */
const IDENTITY = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$/
/** GIT_* variables git reads only to reach a remote or a person (TLS, ssh, prompts, pager, editor): never to find one. */
const TRANSPORT = /^GIT_(SSL_[A-Z_]+|SSH|SSH_COMMAND|SSH_VARIANT|ASKPASS|TERMINAL_PROMPT|PAGER|EDITOR)$/
/** Config sections that decide whether git may open a repository (safe.*) or bring in more config (include*). */
const OPENING_SECTIONS = new Set(['safe', 'include', 'includeif'])

/**
 * The caller's GIT_* variables (those cleanGitEnv drops) cannot change which git dir git finds in a work tree's own
 * `.git` folder, nor let git open it where it would refuse: each names an author, says how to reach a remote or a
 * person, leaves the system config out (which can only take a `safe.directory` allowance away), or sets config
 * outside the sections that decide the opening.
 */
export function callerGitIsInert(env: Readonly<NodeJS.ProcessEnv> = context().env): boolean {
  return Object.entries(env).every(([key, value]) => !key.startsWith('GIT_') || isInertVariable(key, value ?? ''))
}

function isInertVariable(key: string, value: string): boolean {
  if (IDENTITY.test(key) || TRANSPORT.test(key) || key === 'GIT_CONFIG_NOSYSTEM' || key === 'GIT_CONFIG_COUNT')
    return true
  if (/^GIT_CONFIG_VALUE_\d+$/.test(key)) return true // its key is judged by the next line
  return /^GIT_CONFIG_KEY_\d+$/.test(key) && !OPENING_SECTIONS.has(value.split('.', 1)[0]!.toLowerCase())
}

export interface RepoObject {
  type: ObjectType
  content: Buffer
}

/** Objects of a repository read verified (readVerified's answer), by one git call each time or one kept open. */
export type ObjectReader = (ids: string[], what: string) => Promise<Map<string, RepoObject>>

export interface ObjectSession {
  read: ObjectReader
  close: () => void
}

/**
 * The objects `ids` of the repository, verified: a missing one is absent from the map (the caller says what that
 * means); one whose bytes do not hash to its id is `git_error`.
 */
export async function readVerified(git: RepoGit, ids: string[], what: string): Promise<Map<string, RepoObject>> {
  const unique = [...new Set(ids)]
  if (unique.length === 0) return new Map()
  const parsed: Parsed[] = []
  const reader = batchReader((header, content) => {
    const record = batchRecord(git, header)
    if (!record) return 0
    if (!content) return record.size + 1 // the content and its newline
    parsed.push({ oid: record.oid, type: record.type, content: content.subarray(0, content.length - 1) })
    return 0
  })
  await plainGitStream(git.repo, ['cat-file', '--batch'], reader.push, {
    env: pinned(git, { GIT_NO_REPLACE_OBJECTS: '1' }),
    input: `${unique.join('\n')}\n`,
    timeoutMs: 120_000,
  })
  return verifiedAll(git, parsed, what)
}

/**
 * readVerified over one `git cat-file --batch` kept open, started on the first read: a snapshot's base commit and
 * each level of its trees, asked in turn, cost one process (a spawn blocks this thread for milliseconds). Reads are
 * answered in the order asked; `close` ends the process once it has answered them.
 */
export function objectSession(git: RepoGit): ObjectSession {
  const feed = new Feed()
  /** Reads not yet answered in full, in the order asked: the objects each has had so far, unverified. */
  const asked: { left: number; objects: Parsed[]; done: (objects: Parsed[] | { error: unknown }) => void }[] = []
  let started = false
  let failure: { error: unknown } | null = null
  const failAll = (error: unknown) => {
    failure ??= { error }
    for (const read of asked.splice(0)) read.done(failure)
  }
  const answered = (object?: Parsed) => {
    const read = asked[0]
    if (!read) throw new Error('git cat-file answered more than it was asked')
    if (object) read.objects.push(object)
    if (--read.left > 0) return
    asked.shift()
    read.done(read.objects)
  }
  const reader = batchReader((header, content) => {
    const record = batchRecord(git, header)
    if (record && !content) return record.size + 1 // the content and its newline
    // a missing one is absent from the map
    answered(
      record ? { oid: record.oid, type: record.type, content: content!.subarray(0, content!.length - 1) } : undefined,
    )
    return 0
  })
  // an answer git should never give stops git and fails every read waiting
  const onData = (chunk: Buffer) => {
    if (failure) return false
    try {
      return reader.push(chunk)
    } catch (error) {
      failAll(error)
      return false
    }
  }
  const start = () =>
    void plainGitStream(git.repo, ['cat-file', '--batch'], onData, {
      env: pinned(git, { GIT_NO_REPLACE_OBJECTS: '1' }),
      feed,
      timeoutMs: 120_000,
    }).then(
      () => failAll(new Error(`git cat-file ended before answering in ${git.repo}`)),
      (error: unknown) => failAll(error),
    )
  return {
    read: (ids, what) => {
      const unique = [...new Set(ids)]
      if (unique.length === 0) return Promise.resolve(new Map())
      if (failure) return Promise.reject(failure.error)
      if (!started) start()
      started = true
      feed.write(`${unique.join('\n')}\n`)
      // verified once all are in: an altered object fails this read only, as a call of its own would
      return new Promise<Parsed[]>((resolve, reject) =>
        asked.push({
          left: unique.length,
          objects: [],
          done: (got) => ('error' in got ? reject(got.error) : resolve(got)),
        }),
      ).then((objects) => verifiedAll(git, objects, what))
    },
    close: () => feed.end(),
  }
}

/** A `cat-file --batch` header: the object's id, type and size, or null for a missing one. */
function batchRecord(git: RepoGit, header: string): { oid: string; type: ObjectType; size: number } | null {
  if (/ missing$/.test(header)) return null
  const match = /^([0-9a-f]+) (\w+) (\d+)$/.exec(header)
  if (!match)
    fail('git_error', `git cat-file answered ${JSON.stringify(header.slice(0, 80))} in ${git.repo}`, { repo: git.repo })
  return { oid: match[1]!, type: match[2]! as ObjectType, size: Number(match[3]) }
}

/** An object as `cat-file --batch` gave it, before it is verified. */
interface Parsed {
  oid: string
  type: ObjectType
  content: Buffer
}

/** The objects by id, each once its bytes hash to its id (`git_error` naming the first that does not). */
function verifiedAll(git: RepoGit, objects: Parsed[], what: string): Map<string, RepoObject> {
  const found = new Map<string, RepoObject>()
  for (const { oid, type, content } of objects) {
    if (objectId(git.format, type, content) !== oid)
      fail(
        'git_error',
        `the ${type} ${oid} (${what}) in ${git.repo}'s object store does not hash to its id: it was altered, and pair-loop will not review against it`,
        { repo: git.repo, object: oid },
      )
    found.set(oid, { type, content })
  }
  return found
}

/** Each object's type and size, unverified (only to decide what to read): the missing ones are absent. */
export async function objectSizes(git: RepoGit, ids: string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  const unique = [...new Set(ids)]
  if (unique.length === 0) return sizes
  let text = ''
  await plainGitStream(
    git.repo,
    ['cat-file', '--batch-check'],
    (chunk) => {
      text += chunk.toString('latin1')
      return true
    },
    { env: pinned(git, { GIT_NO_REPLACE_OBJECTS: '1' }), input: `${unique.join('\n')}\n`, timeoutMs: 120_000 },
  )
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+) \w+ (\d+)$/.exec(line)
    if (match) sizes.set(match[1]!, Number(match[2]))
  }
  return sizes
}

/**
 * `cat-file --batch` output read as it comes: `onRecord(header)` says how many bytes follow the header line (0: none),
 * then `onRecord(header, those bytes)`. Chunks are joined once per object, never once per chunk.
 */
export function batchReader(onRecord: (header: string, content?: Buffer) => number): {
  push: (chunk: Buffer) => boolean
} {
  let chunks: Buffer[] = []
  let held = 0
  let header: string | null = null
  let need = 0
  const take = (count: number): Buffer => {
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    chunks = all.length > count ? [all.subarray(count)] : []
    held = all.length - count
    return all.subarray(0, count)
  }
  return {
    push(chunk) {
      chunks.push(chunk)
      held += chunk.length
      for (;;) {
        if (header === null) {
          const joined = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
          chunks = [joined]
          const eol = joined.indexOf(10)
          if (eol < 0) return true
          header = take(eol + 1).toString('latin1', 0, eol)
          need = onRecord(header)
          if (need === 0) header = null
          continue
        }
        if (held < need) return true
        onRecord(header, Buffer.from(take(need)))
        header = null
      }
    },
  }
}
