// The Action's `mode: verify`, in a pull_request job: the PR body's pair-loop record (lib/pr/record.ts) against the
// PR as GitHub reports it. The head's tree must be the newest approved tree, the review's base must be on the PR's
// target branch, and the approving reviewer must be one `require_reviewers` accepts. No model key, no run home: the
// record is the PR opener's claim, and this checks that what ships is what that claim says was approved.
import type { Context } from '../ground/context.ts'
import { actionInput, appendSummary, jobTarget, pullRequestEvent, setOutputs } from '../ground/actions-env.ts'
import { fail, isPairLoopError } from '../ground/errors.ts'
import { type GhTarget, ghJson, runGh } from '../ground/gh.ts'
import { neutraliseInline } from '../ground/neutralise.ts'
import { readRecord, type PrRecord } from '../pr/record.ts'
import { parsePolicy, refusal } from '../pr/reviewer-policy.ts'
import { commitTreeOnGitHub, compareHead, onBranchOnGitHub } from '../snapshot/ship.ts'

interface PullRequest {
  head: string
  target: string
  body: string
}

/** The PR's head commit, target branch and body, as GitHub reports them now (not the event's copy). */
async function readPull(at: GhTarget, repository: string, number: number): Promise<PullRequest> {
  const route = `repos/${repository}/pulls/${number}`
  const pull = ghJson(await runGh(['api', route], { at, idempotent: true }), 'api pulls') as {
    head?: { sha?: unknown }
    base?: { ref?: unknown }
    body?: unknown
  }
  const head = pull.head?.sha
  const target = pull.base?.ref
  if (typeof head !== 'string' || !/^[0-9a-f]{40,64}$/.test(head) || typeof target !== 'string')
    fail('gh_error', `GitHub did not give PR #${number}'s head commit and base branch`, { pr: number })
  return { head, target, body: typeof pull.body === 'string' ? pull.body : '' }
}

/** `head_not_approved`, for a reason other than differing trees: the record, its outcome or its reviewer. */
function notApproved(pr: number, reason: string, message: string, details: Record<string, unknown> = {}): never {
  fail('head_not_approved', `PR #${pr}: ${message}`, { pr, reason, ...details })
}

export async function runVerify(ctx: Context) {
  const { repository, number: pr } = pullRequestEvent(ctx.env)
  const policy = parsePolicy(actionInput(ctx.env, 'require_reviewers'), actionInput(ctx.env, 'allow_same_vendor'))
  const at = jobTarget(ctx.env, ctx.cwd, repository)
  try {
    const pull = await readPull(at, repository, pr)
    const reading = readRecord(pull.body)
    if (!reading.ok)
      notApproved(pr, `record_${reading.why}`, `${reading.message}; open it with \`pair-loop finish --create-pr\``)
    const record = reading.record
    const newest = record.approvals.at(-1)
    if (record.outcome !== 'APPROVED' || !newest)
      notApproved(
        pr,
        'not_approved',
        `the run ${record.run_id} the PR body names ended ${record.outcome ?? 'open'}, not approved`,
        {
          run_id: record.run_id,
        },
      )
    const refused = refusal(newest.reviewer, record.coder, policy)
    if (refused) notApproved(pr, 'reviewer_not_accepted', refused, { reviewer: newest.reviewer, coder: record.coder })
    const tree = await commitTreeOnGitHub(at, pull.head)
    const check = await compareHead(at, { head: pull.head, tree }, newest.tree, ctx.home)
    if (!check.matches)
      notApproved(
        pr,
        'tree_differs',
        `the head ${pull.head.slice(0, 12)} (tree ${tree.slice(0, 12)}) is not the newest approved tree ${newest.tree.slice(0, 12)}; hand the change over for review, then push exactly the approved tree`,
        { head: pull.head, head_tree: tree, approved_tree: newest.tree, next: 'coder-done' },
      )
    if (!(await onBranchOnGitHub(at, record.base_sha, pull.target)))
      notApproved(
        pr,
        'base_not_on_target',
        `the review's base ${record.base_sha.slice(0, 12)} is not on ${pull.target}: the PR would also ship commits no reviewer saw`,
        { base: record.base_sha, target: pull.target },
      )
    const document = verifiedDocument(pr, pull, tree, record)
    setOutputs(ctx.env, {
      approved_tree: newest.tree,
      reviewers: JSON.stringify(record.approvals.map((approval) => approval.reviewer)),
      rounds: String(record.rounds),
      cost_usd: record.cost_usd === null ? '' : String(record.cost_usd),
    })
    appendSummary(ctx.env, passedSummary(document, record))
    return document
  } catch (error) {
    if (isPairLoopError(error)) appendSummary(ctx.env, failedSummary(pr, error.code, error.message))
    throw error
  }
}

function verifiedDocument(pr: number, pull: PullRequest, tree: string, record: PrRecord) {
  const newest = record.approvals.at(-1)!
  return {
    mode: 'verify',
    pr,
    run_id: record.run_id,
    matches: true,
    head: pull.head,
    head_tree: tree,
    approved_tree: newest.tree,
    approved_trees: record.approvals.map((approval) => approval.tree),
    base: record.base_sha,
    target: pull.target,
    reviewer: newest.reviewer,
    reviewers: record.approvals.map((approval) => approval.reviewer),
    coder: record.coder,
    rounds: record.rounds,
    cost_usd: record.cost_usd,
  }
}

const code = (text: string) => `\`${neutraliseInline(text).replace(/`/g, "'")}\``

function passedSummary(doc: ReturnType<typeof verifiedDocument>, record: PrRecord): string {
  const who = `${doc.reviewer.tool} (${doc.reviewer.kind}${doc.reviewer.program ? `, ${code(doc.reviewer.program)}` : ''})`
  return [
    `### pair-loop verify: PR #${doc.pr} ships the approved tree`,
    '',
    '| | |',
    '|---|---|',
    `| head | ${code(doc.head)} |`,
    `| approved tree | ${code(doc.approved_tree)} (newest of ${doc.approved_trees.length}) |`,
    `| base | ${code(doc.base)}, on ${code(doc.target)} |`,
    `| reviewer | ${who}; coder ${doc.coder} |`,
    `| rounds | ${doc.rounds} |`,
    `| cost | ${record.cost_usd === null ? 'not measured' : `$${record.cost_usd.toFixed(4)}`} |`,
    '',
    "_What this proves: the head is the tree the PR body's record says was approved, from the recorded base. The record is written by whoever opened the PR; `mode: review` is the review no coder holds the key to._",
  ].join('\n')
}

function failedSummary(pr: number, codeName: string, message: string): string {
  return [`### pair-loop verify: PR #${pr} failed (${codeName})`, '', neutraliseInline(message)].join('\n')
}
