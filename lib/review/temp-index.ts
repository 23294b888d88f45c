// A temporary index that tells the truth about the working tree, for the review diff and the change's fingerprint.
//
// It starts as a copy of the user's (git's stat cache then spares every unchanged file: the cost is about
// `git status`'s); untracked files enter it as entries that need a look (the empty blob, no stat), so git reads them
// from the disk without hashing them into .git/objects; index flags the coder could have set to hide a file
// (assume-unchanged, skip-worktree) are dropped in the copy. The user's own index is never touched.
import { copyFileSync, existsSync, lstatSync, statSync, utimesSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { hexDigest } from '../digest.ts'
import { nulRecords } from '../exec.ts'
import { withTempDir } from '../fsutil.ts'
import { isOwnFile, safeGit, safeGitStream, TREE_WALK_TIMEOUT_MS } from '../git.ts'

/**
 * Run `use` with git's environment pointed at a temporary index of `repo` (`top`: the repository the run is in, whose
 * HANDOFF.md is pair-loop's own); removed after. Also returns the checked-out submodules' paths.
 */
export async function withTempIndex<T>(
  repo: string,
  top: boolean,
  use: (env: NodeJS.ProcessEnv) => Promise<T>,
): Promise<{ value: T; gitlinks: string[] }> {
  return withTempDir('pair-loop-index-', async (dir) => {
    const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') }
    const gitlinks = await prepareIndex(repo, env, top)
    return { value: await use(env), gitlinks }
  })
}

/**
 * Copy the user's index into GIT_INDEX_FILE, then make it tell the truth about the working tree: each untracked file
 * (and each entry the coder flagged assume-unchanged or skip-worktree, or left unmerged) is re-entered without stat
 * data, so git compares it by content, read from the disk. Returns the checked-out submodules' paths.
 */
async function prepareIndex(repo: string, env: NodeJS.ProcessEnv, top: boolean): Promise<string[]> {
  const [format, own] = (await safeGit(repo, ['rev-parse', '--show-object-format', '--git-path', 'index'])).split('\n')
  const ownPath = isAbsolute(own!) ? own! : resolve(repo, own!)
  if (existsSync(ownPath)) copyIndex(ownPath, env.GIT_INDEX_FILE!)
  const gitlinks: string[] = []
  const untracked: string[] = []
  const removed = new Set<string>() // unmerged: every stage dropped, the file (if any) entered as new
  const reentered: string[] = [] // flagged: the same entry again, without its flags or stat data
  const cached = nulRecords((record) => {
    if (/^H (100644|100755|120000) [0-9a-f]+ 0\t/.test(record)) return // a plain file, staged: nothing to do
    const entry = /^(\S) (\d{6}) ([0-9a-f]+) (\d)\t(.*)$/s.exec(record)
    if (!entry) return
    const [, tag, mode, oid, stage, path] = entry as unknown as [string, string, string, string, string, string]
    if (stage !== '0') removed.add(`0 ${'0'.repeat(oid.length)}\t${path}`)
    else if (mode === '160000') gitlinks.push(path)
    if (stage === '0' && /[a-zS]/.test(tag) && onDisk(join(repo, path))) reentered.push(`${mode} ${oid}\t${path}`)
  })
  const others = nulRecords((path) => {
    if (path && !(top && isOwnFile(path))) untracked.push(path)
  })
  // the index listing and the untracked scan are independent: side by side
  const options = { env, timeoutMs: TREE_WALK_TIMEOUT_MS }
  await Promise.all([
    safeGitStream(repo, ['ls-files', '-z', '--stage', '-v'], cached.onData, options),
    safeGitStream(repo, ['ls-files', '-z', '--others', '--exclude-standard'], others.onData, options),
  ])
  cached.end()
  others.end()
  for (const line of removed) {
    const path = line.slice(line.indexOf('\t') + 1)
    if (onDisk(join(repo, path))) untracked.push(path)
  }
  const lines = [...removed, ...reentered]
  if (untracked.length > 0) {
    const empty = hexDigest('blob 0\0', format === 'sha256' ? 'sha256' : 'sha1') // the empty blob
    for (const path of untracked) {
      const entry = await untrackedEntry(repo, path, empty)
      if (entry) lines.push(`${entry.mode} ${entry.oid}\t${entry.path}`)
      if (entry?.mode === '160000') gitlinks.push(entry.path)
    }
  }
  if (lines.length > 0)
    await safeGit(repo, ['update-index', '-z', '--index-info'], { env, input: `${lines.join('\0')}\0` })
  return gitlinks.filter((path) => existsSync(join(repo, path, '.git')))
}

/**
 * The copy keeps the index's own mtime: git trusts an entry's stat data only when the file is older than the index
 * ("racy git"), so a fresh mtime on the copy would let a same-size edit made in the index's last second pass as clean.
 */
function copyIndex(from: string, to: string): void {
  copyFileSync(from, to)
  const { atimeMs, mtimeMs } = statSync(from)
  utimesSync(to, atimeMs / 1000, Math.floor(mtimeMs) / 1000) // rounded down: only ever more entries re-checked
}

const onDisk = (path: string) => {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/** An untracked path as an index entry git must look at: its mode from the disk, no content hashed. */
async function untrackedEntry(
  repo: string,
  listed: string,
  emptyBlob: string,
): Promise<{ mode: string; oid: string; path: string } | undefined> {
  const path = listed.replace(/\/$/, '')
  let stats: ReturnType<typeof lstatSync>
  try {
    stats = lstatSync(join(repo, path))
  } catch {
    return undefined // gone since git listed it
  }
  if (stats.isSymbolicLink()) return { mode: '120000', oid: emptyBlob, path }
  if (stats.isFile()) return { mode: stats.mode & 0o111 ? '100755' : '100644', oid: emptyBlob, path }
  // a directory git lists is a repository of its own, not yet a submodule: its checked-out commit
  const head = await safeGit(join(repo, path), ['rev-parse', '--verify', '--quiet', 'HEAD']).catch(() => '')
  return head.trim() ? { mode: '160000', oid: head.trim(), path } : undefined
}
