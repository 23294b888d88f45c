// What ships is what was approved: the branch's local head (no PR yet) or a PR's head as GitHub reports it, against the
// tree the approving review saw; a head that differs is head_not_approved naming the paths (finish, verify).
import { ghTarget } from '../ground/gh.ts'
import { checkLocalHead } from '../snapshot/local-head.ts'
import { checkShipped, headNotApproved, type ShipCheck } from '../snapshot/ship.ts'
import type { RunState } from '../run/state.ts'

/** The check when the head is the approved tree; `details` go into the error (after `source`, before `base`). */
export async function expectApprovedHead(
  run: Pick<RunState, 'repo' | 'base_sha' | 'github'>,
  approved: string,
  pr: number | null,
  { home, details = {} }: { home: string; details?: Record<string, unknown> },
): Promise<ShipCheck> {
  if (pr === null) {
    const local = await checkLocalHead(run, approved, home)
    if (!local.matches) headNotApproved(local, null, { source: 'local', ...details })
    return local
  }
  const shipped = await checkShipped(ghTarget(run), pr, { tree: approved, base: run.base_sha }, home)
  if (!shipped.matches) headNotApproved(shipped, pr, { source: 'github', ...details, base: run.base_sha })
  return shipped
}
