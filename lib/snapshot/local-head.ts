// The branch's head commit in the local repository against the approved tree: a check before a PR is opened (the
// commit's tree read from its verified object, the differing paths from verified trees). GitHub's answer is the one
// that counts once the PR exists (ship.ts).
import { pairLoopHome } from '../ground/paths.ts'
import type { RunState } from '../run/state.ts'
import { headSha } from '../ground/git.ts'
import { readManifest, treeManifest } from './manifest.ts'
import { changesBetween, commitTreeOf, repoGit } from './snapshot.ts'
import type { ShipCheck } from './ship.ts'

export async function checkLocalHead(
  run: Pick<RunState, 'repo'>,
  approved: string,
  home = pairLoopHome(),
): Promise<ShipCheck> {
  const git = await repoGit(run.repo)
  const head = await headSha(run.repo)
  const tree = await commitTreeOf(git, head, `the head commit ${head.slice(0, 12)}`)
  const base = { approved_tree: approved, head, head_tree: tree }
  if (tree === approved) return { ...base, matches: true, paths: [], differing: 0 }
  const known = readManifest(home, approved)
  if (!known) return { ...base, matches: false, paths: [], differing: null }
  const headLeaves = await treeManifest(git, tree, home, `the head commit ${head.slice(0, 12)}'s tree`)
  headLeaves.delete('HANDOFF.md')
  const differ = changesBetween(known, headLeaves).map((change) => change.path)
  if (differ.length === 0) return { ...base, matches: true, paths: [], differing: 0 } // HANDOFF.md alone differed
  return { ...base, matches: false, paths: differ.slice(0, 100), differing: differ.length }
}
