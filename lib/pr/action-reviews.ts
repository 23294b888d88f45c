// Which comments of `github-actions[bot]` are a review. Every workflow of the repository (and one a PR adds) posts as
// that one account, so its login proves nothing: an entry of `pair_loop.pr_action_reviews` names what does, the
// workflow file of the Actions run the comment links to, a marker its body carries, or both. Pure.
import type { ActionReview } from '../run/config.ts'
import type { ActionRun } from '../run/pr-schema.ts'

export const ACTIONS_LOGIN = 'github-actions[bot]'

export interface ActionIdentity {
  rules: readonly ActionReview[]
  /** The Actions runs the snapshot looked up (`snapshot.action_runs`). */
  runs: readonly ActionRun[]
  /** The repository's web address (`https://github.com/o/r`): only a link to one of its own runs counts. */
  repo_url: string
}

/** A comment or a review body as posted: what it says and when it was written. */
export interface Posted {
  body: string
  created_at?: string | null
  submitted_at?: string | null
  last_edited_at?: string | null
}

/** The repository a PR's web address belongs to: `https://github.com/o/r/pull/7` → `https://github.com/o/r`. */
export const repoUrlOf = (prUrl: string) => prUrl.replace(/\/pull\/\d+\/?$/, '')

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** This repository's Actions runs a body links to (claude-code-action's `[View job](…/actions/runs/ID)`). */
export function runIdsIn(body: string, repoUrl: string): number[] {
  const link = new RegExp(`${escaped(repoUrl)}/actions/runs/(\\d+)`, 'gi')
  return [...new Set([...body.matchAll(link)].map((match) => Number(match[1])))]
}

/** Whether one `pr_action_reviews` entry identifies the comment (every part it names must hold). */
export function identifiesActionReview(posted: Posted, identity: ActionIdentity): boolean {
  return identity.rules.some(
    (rule) =>
      (rule.marker === undefined || posted.body.includes(rule.marker)) &&
      (rule.workflow === undefined || linksRunOf(posted, rule.workflow, identity)),
  )
}

// GitHub's `path` of a run may carry the ref it ran from (`.github/workflows/x.yml@refs/heads/main`)
const workflowFile = (path: string) => path.replace(/@.*$/, '').replace(/^\.\//, '')

/** The comment links a run of that workflow file in this repository, and was written while that run ran. */
function linksRunOf(posted: Posted, workflow: string, identity: ActionIdentity): boolean {
  return runIdsIn(posted.body, identity.repo_url).some((id) => {
    const run = identity.runs.find((r) => r.id === id)
    return Boolean(run?.path && workflowFile(run.path) === workflowFile(workflow) && writtenDuring(posted, run))
  })
}

/** A link copied from an older run's comment, or into a comment edited after the run ended, is not that run's. */
function writtenDuring(posted: Posted, run: ActionRun): boolean {
  const written = Date.parse(posted.created_at ?? posted.submitted_at ?? '')
  const edited = Date.parse(posted.last_edited_at ?? '') || written
  if (run.run_started_at && written < Date.parse(run.run_started_at)) return false
  if (run.status === 'completed' && run.updated_at && edited > Date.parse(run.updated_at)) return false
  return true
}
