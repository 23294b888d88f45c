// What ships is what was approved: a PR head's tree, as GitHub reports it (never as the local repository, which the
// coder writes, says), compared whole with the tree the reviewer approved: no name is set aside (a HANDOFF.md in it
// is a file like any other).
import { fail } from '../ground/errors.ts'
import { type GhTarget, ghJson, runGh } from '../ground/gh.ts'
import { type Manifest, readManifest } from './manifest.ts'
import type { TreeMode } from './objects.ts'

export interface ShipCheck {
  approved_tree: string
  head: string
  head_tree: string
  matches: boolean
  /** Paths whose entry differs between the approved tree and the head's (at most MAX_NAMED). */
  paths: string[]
  /** How many paths differ in all (null: not counted, GitHub's listing was cut short or unavailable). */
  differing: number | null
  /**
   * The review's base is already on the PR's base branch (GitHub's): else the PR also ships the commits between them,
   * which no reviewer saw (a local base branch moved to hide them). Null: not asked (no PR).
   */
  base_on_target?: boolean | null
}

const MAX_NAMED = 100
const REST = 'repos/{owner}/{repo}'

/** The PR's head commit, its tree and its base branch, as GitHub reports them. */
export async function prHeadTree(
  at: GhTarget,
  pr: number,
): Promise<{ head: string; tree: string; target: string | null }> {
  const pull = ghJson(await runGh(['api', `${REST}/pulls/${pr}`], { at, idempotent: true }), 'api pulls') as {
    head?: { sha?: unknown }
    base?: { ref?: unknown }
  }
  const head = pull.head?.sha
  if (typeof head !== 'string' || !/^[0-9a-f]{40,64}$/.test(head))
    fail('gh_error', `GitHub did not give PR #${pr}'s head commit`, { pr })
  const target = typeof pull.base?.ref === 'string' ? pull.base.ref : null
  return { head, tree: await commitTreeOnGitHub(at, head), target }
}

/** Is `commit` already on GitHub's `branch` (the branch's tip is it or descends from it)? */
export async function onBranchOnGitHub(at: GhTarget, commit: string, branch: string): Promise<boolean> {
  const route = `${REST}/compare/${encodeURIComponent(branch)}...${commit}`
  const answer = ghJson(await runGh(['api', route], { at, idempotent: true }), 'api compare') as { status?: unknown }
  return answer.status === 'identical' || answer.status === 'behind'
}

/** A commit's tree, as GitHub reports it. */
export async function commitTreeOnGitHub(at: GhTarget, commit: string): Promise<string> {
  const answer = ghJson(
    await runGh(['api', `${REST}/git/commits/${commit}`], { at, idempotent: true }),
    'api commits',
  ) as {
    tree?: { sha?: unknown }
  }
  const tree = answer.tree?.sha
  if (typeof tree !== 'string' || !/^[0-9a-f]{40,64}$/.test(tree))
    fail('gh_error', `GitHub did not give the tree of commit ${commit.slice(0, 12)}`, { commit })
  return tree
}

interface GitHubEntry {
  path: string
  mode: string
  type: string
  sha: string
}

async function listTree(
  at: GhTarget,
  tree: string,
  recursive: boolean,
): Promise<{ entries: GitHubEntry[]; truncated: boolean }> {
  const route = `${REST}/git/trees/${tree}${recursive ? '?recursive=1' : ''}`
  const answer = ghJson(await runGh(['api', route], { at, idempotent: true }), 'api trees') as {
    tree?: unknown
    truncated?: unknown
  }
  const entries = Array.isArray(answer.tree)
    ? (answer.tree as GitHubEntry[]).filter((entry) => typeof entry?.path === 'string' && typeof entry.sha === 'string')
    : []
  return { entries, truncated: answer.truncated === true }
}

const normal = (mode: string): TreeMode => (mode === '040000' || mode === '40000' ? '40000' : (mode as TreeMode))

/** Compare PR `pr`'s head (GitHub's) with `approved`: the tree ids, then the differing paths by name. */
export async function checkShipped(
  at: GhTarget,
  pr: number,
  approved: { tree: string; base: string },
  home: string,
): Promise<ShipCheck> {
  const { head, tree, target } = await prHeadTree(at, pr)
  return checkHeadCommit(at, { head, tree, target }, approved, home)
}

/** A PR head (GitHub's) against the approval: its tree, and the review's base on the PR's base branch (`target`). */
export async function checkHeadCommit(
  at: GhTarget,
  { head, tree, target }: { head: string; tree: string; target: string | null },
  approved: { tree: string; base: string },
  home: string,
): Promise<ShipCheck> {
  const check = await compareHead(at, { head, tree }, approved.tree, home)
  const baseOnTarget = target === null ? null : await onBranchOnGitHub(at, approved.base, target)
  return { ...check, matches: check.matches && baseOnTarget !== false, base_on_target: baseOnTarget }
}

/** A head commit's tree (GitHub's) against the approved one, whole; the differing paths when not. */
export async function compareHead(
  at: GhTarget,
  { head, tree }: { head: string; tree: string },
  approved: string,
  home: string,
): Promise<ShipCheck> {
  const base = { approved_tree: approved, head, head_tree: tree }
  if (tree === approved) return { ...base, matches: true, paths: [], differing: 0 }
  return { ...base, matches: false, ...(await differingPaths(at, tree, readManifest(home, approved))) }
}

/** The paths that differ, from GitHub's recursive listing of the head against the approved snapshot's leaves. */
async function differingPaths(
  at: GhTarget,
  tree: string,
  approved: Manifest | null,
): Promise<{ paths: string[]; differing: number | null }> {
  if (!approved) return { paths: [], differing: null }
  const listed = await listTree(at, tree, true)
  const head = new Map(listed.entries.filter((entry) => entry.type !== 'tree').map((entry) => [entry.path, entry]))
  const differ: string[] = []
  for (const [path, entry] of head) {
    const leaf = approved.get(path)
    if (!leaf || leaf.oid !== entry.sha || leaf.mode !== normal(entry.mode)) differ.push(path)
  }
  for (const path of approved.keys()) if (!head.has(path)) differ.push(path)
  differ.sort()
  return { paths: differ.slice(0, MAX_NAMED), differing: listed.truncated ? null : differ.length }
}

/** `head_not_approved`, naming what differs and what to do. */
export function headNotApproved(check: ShipCheck, pr: number | null, details: Record<string, unknown> = {}): never {
  const named = check.paths.length
    ? `: ${check.paths.slice(0, 10).join(', ')}${(check.differing ?? check.paths.length) > 10 ? ', …' : ''}`
    : ''
  if (check.base_on_target === false && check.head_tree === check.approved_tree)
    fail(
      'head_not_approved',
      `PR #${pr}'s base branch on GitHub does not hold the review's base ${String(details.base ?? '').slice(0, 12)}: the PR would also ship the commits between them, which no reviewer saw; start a run against the real base branch`,
      { pr, ...check, ...details },
    )
  fail(
    'head_not_approved',
    `${pr === null ? 'the branch' : `PR #${pr}`}'s head ${check.head.slice(0, 12)} (tree ${check.head_tree.slice(0, 12)}) is not the tree the reviewer approved (${check.approved_tree.slice(0, 12)})${named}; push exactly the approved change, or hand the new one over with \`pair-loop coder-done\` for review`,
    { pr, ...check, ...details },
  )
}
