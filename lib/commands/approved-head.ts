// What ships is what was approved: the branch's local head (no PR yet) or a PR's head as GitHub reports it, against the
// newest tree a review approved; a head that differs is head_not_approved naming the paths and the way on (`next`:
// push the newest approved tree, or hand the change over with coder-done), never a dead end (finish, verify).
import { ghTarget } from '../ground/gh.ts'
import { checkLocalHead } from '../snapshot/local-head.ts'
import { checkShipped, headNotApproved, type ShipCheck } from '../snapshot/ship.ts'
import type { RunState } from '../run/state.ts'
import { afterUnapprovedHead } from '../run/run-queries.ts'

/** The check when the head is the approved tree; `details` go into the error (after `source`, before `base`). */
export async function expectApprovedHead(
  run: RunState,
  approved: string,
  pr: number | null,
  { home, details = {} }: { home: string; details?: Record<string, unknown> },
): Promise<ShipCheck> {
  // a PR's head the reviewer did not see: push the newest approved tree, or have the pushed change reviewed first
  const wayOn = (check: ShipCheck) => ({ next: afterUnapprovedHead(run, check.head_tree), ...details })
  if (pr === null) {
    const local = await checkLocalHead(run, approved, home)
    if (!local.matches) headNotApproved(local, null, { source: 'local', ...details })
    return local
  }
  const shipped = await checkShipped(ghTarget(run), pr, { tree: approved, base: run.base_sha }, home)
  if (!shipped.matches) headNotApproved(shipped, pr, { source: 'github', ...wayOn(shipped), base: run.base_sha })
  return shipped
}
