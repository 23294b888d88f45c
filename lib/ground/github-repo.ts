// The GitHub repository a run's PR lives in, pinned at `start` (DESIGN.md, Authority): read once from the remote the
// base branch tracks, recorded on the run, and named in every gh call after. gh would otherwise pick the repository
// from the checkout's remotes on each call, and .git/config is the coder's: a remote added with `gh-resolved = base`
// would point verify and pr-check at another repository's PR.
import { plainGitTry } from './git.ts'

/** A repository on a GitHub host: `repo` is `owner/name`. */
export interface GitHubRepo {
  host: string
  repo: string
}

/** GitHub's own rule for owner and repository names (letters, digits, `-`, `_`, `.`), never `.` or `..`. */
const NAME = /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/

/** A remote URL's host and owner/name: https, ssh, git and scp-like forms; null for anything else (a local path). */
export function githubRepoOf(url: string): GitHubRepo | null {
  const trimmed = url.trim()
  const full = /^(?:https?|ssh|git):\/\/(?:[^@/]+@)?([^/:]+)(?::\d+)?\/(.+)$/i.exec(trimmed)
  const scp = full ? null : /^(?:[^@/:]+@)?([^/:]+):(?!\/)(.+)$/.exec(trimmed)
  const [host, path] = full ? [full[1]!, full[2]!] : scp ? [scp[1]!, scp[2]!] : [null, null]
  if (host === null || path === null || !host.includes('.')) return null
  const parts = path
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/')
  if (parts.length !== 2 || !parts.every((part) => NAME.test(part))) return null
  return { host: canonicalHost(host), repo: parts.join('/') }
}

/** As gh names github.com whichever way a remote reaches it. */
function canonicalHost(host: string): string {
  const lower = host.toLowerCase()
  return lower === 'www.github.com' || lower === 'ssh.github.com' ? 'github.com' : lower
}

/**
 * The repository of the remote the base branch tracks: the remote `--base` named (`upstream/main`), else the base
 * branch's upstream, else `origin`, else the only remote. Null: no remote, or one that is not on a GitHub-like host.
 * The URLs as git fetches from them (`remote -v` applies `url.*.insteadOf`), as gh reads them.
 */
export async function pinGitHubRepo(
  repo: string,
  base: { rev: string | null; branch: string | null },
): Promise<GitHubRepo | null> {
  const listed = await plainGitTry(repo, ['remote', '-v'])
  const urls = new Map<string, string>()
  for (const line of listed.ok ? listed.stdout.split('\n') : []) {
    const fetched = /^([^\t]+)\t(.+) \(fetch\)$/.exec(line)
    if (fetched) urls.set(fetched[1]!, fetched[2]!)
  }
  const remotes = [...urls.keys()]
  const remote = remotes.length < 2 ? (remotes[0] ?? null) : await trackedRemote(repo, base, remotes)
  return remote === null ? null : githubRepoOf(urls.get(remote)!)
}

/** Among several remotes: the one `--base` named, the base branch's upstream, `origin`; null when none of them. */
async function trackedRemote(
  repo: string,
  { rev, branch }: { rev: string | null; branch: string | null },
  remotes: string[],
): Promise<string | null> {
  const named = rev === null ? undefined : remotes.find((remote) => rev.startsWith(`${remote}/`))
  if (named) return named
  if (branch !== null) {
    const upstream = await plainGitTry(repo, [
      'for-each-ref',
      '--format=%(upstream:remotename)',
      `refs/heads/${branch}`,
    ])
    const name = upstream.ok ? upstream.stdout.trim() : ''
    if (remotes.includes(name)) return name
  }
  return remotes.includes('origin') ? 'origin' : null
}

/** How a gh call names the repository: `--repo HOST/OWNER/NAME`. */
export const repoFlag = (pinned: GitHubRepo) => `${pinned.host}/${pinned.repo}`
