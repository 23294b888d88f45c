// The PR phase's read side: one snapshot of the PR (metadata, the CI rollup, review threads with every comment page,
// conversation comments, reviews) through gh's GraphQL API, paginated. The head is read before and after; if it moved
// the whole collection runs once more, and a head that moves again is `head_moved`. With `lookUpRuns`, the Actions runs
// `github-actions[bot]` comments link to are read too (REST, one call per run, once per tick), for `pr_action_reviews`.
import { fail, isPairLoopError } from '../ground/errors.ts'
import { type GhTarget, ghJson, runGh } from '../ground/gh.ts'
import { settings } from '../ground/settings.ts'
import { type GraphqlVars, graphql } from './github.ts'
import { PR_COMMENTS, PR_HEAD, PR_META, PR_REVIEWS, PR_THREADS, THREAD_COMMENTS } from './queries.ts'
import type { ActionRun, Snapshot, SnapshotComment } from '../run/pr-schema.ts'
import { ACTIONS_LOGIN, repoUrlOf, runIdsIn } from './action-reviews.ts'

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are read field by field below
type Node = any

interface Page {
  nodes: Node[]
  pageInfo: { hasNextPage: boolean; endCursor: string | null }
}

export interface CollectOptions {
  /** The run's checkout and its pinned repository. */
  at: GhTarget
  number: number
  /** Page size of every connection (GitHub allows 100); small in tests so pagination is exercised. */
  pageSize?: number
  /** Look up the Actions runs `github-actions[bot]` comments link to (a `pr_action_reviews` entry names a workflow). */
  lookUpRuns?: boolean
}

export async function collectSnapshot(options: CollectOptions): Promise<Snapshot> {
  const runs = new Map<number, ActionRun | null>() // a second collection (the head moved) asks no run twice
  for (let attempt = 1; attempt <= 2; attempt++) {
    const snapshot = await collectOnce(options)
    const after = await readHead(options)
    if (after !== snapshot.pr.head) continue // a push landed while it was read: read it all again
    return options.lookUpRuns ? { ...snapshot, action_runs: await linkedRuns(options, snapshot, runs) } : snapshot
  }
  fail('head_moved', `the head of PR #${options.number} moved twice while it was being read; run pr-check again`, {
    pr: options.number,
  })
}

// GitHub's largest page (100) by default; `pr-check --page-size` (or PAIR_LOOP_GH_PAGE_SIZE) makes it smaller
const pageSize = (options: CollectOptions) => options.pageSize ?? settings().ghPageSize

function prVars(options: CollectOptions): GraphqlVars {
  return { owner: '{owner}', name: '{repo}', number: options.number }
}

function pullRequestOf(data: Record<string, unknown>, number: number): Node {
  const pr = (data as Node).repository?.pullRequest
  if (!pr) fail('gh_error', `GitHub has no PR #${number} in this repository`, { pr: number, retryable: false })
  return pr
}

async function readHead(options: CollectOptions): Promise<string> {
  return pullRequestOf(await graphql(options.at, PR_HEAD, prVars(options)), options.number).headRefOid
}

/** Every page of one connection of the PR: `pick` finds it in an answer. */
async function allPages(
  options: CollectOptions,
  query: string,
  pick: (pr: Node) => Page | null | undefined,
): Promise<{ nodes: Node[]; first: Node }> {
  const nodes: Node[] = []
  let after: string | null = null
  let first: Node
  for (let page = 0; page < 1000; page++) {
    const data = await graphql(options.at, query, { ...prVars(options), first: pageSize(options), after })
    const holder = pullRequestOf(data, options.number)
    first ??= holder
    const connection = pick(holder)
    if (!connection) break
    nodes.push(...connection.nodes)
    if (!connection.pageInfo.hasNextPage) break
    after = connection.pageInfo.endCursor
  }
  return { nodes, first }
}

async function collectOnce(options: CollectOptions): Promise<Snapshot> {
  const meta = await allPages(options, PR_META, (pr) => pr.commits?.nodes?.[0]?.commit?.statusCheckRollup?.contexts)
  const pr = meta.first
  const threads = await allPages(options, PR_THREADS, (holder) => holder.reviewThreads)
  const comments = await allPages(options, PR_COMMENTS, (holder) => holder.comments)
  const reviews = await allPages(options, PR_REVIEWS, (holder) => holder.reviews)
  const fullThreads = []
  for (const thread of threads.nodes) {
    let threadComments: Node[] = thread.comments.nodes
    if (thread.comments.pageInfo.hasNextPage) {
      // the first page came with the thread; the rest, page by page, from the thread's own node
      const rest = await allPagesAfter(options, thread.id, thread.comments.pageInfo.endCursor)
      threadComments = [...threadComments, ...rest]
    }
    fullThreads.push({
      id: thread.id,
      path: thread.path ?? null,
      line: thread.line ?? null,
      is_resolved: Boolean(thread.isResolved),
      is_outdated: Boolean(thread.isOutdated),
      comments: threadComments.map(threadComment),
    })
  }
  return {
    version: 1,
    pr: {
      number: pr.number,
      url: pr.url,
      head: pr.headRefOid,
      branch: pr.headRefName,
      base: pr.baseRefName,
      author: loginOf(pr.author),
      state: pr.state,
      mergeable: pr.mergeable,
      review_decision: pr.reviewDecision ?? null,
      merged_at: pr.mergedAt ?? null,
    },
    checks: meta.nodes.map(checkOf),
    threads: fullThreads,
    comments: comments.nodes.map((c) => ({
      id: c.databaseId,
      author: loginOf(c.author),
      author_type: typeOf(c.author),
      body: c.body ?? '',
      created_at: c.createdAt ?? null,
      last_edited_at: c.lastEditedAt ?? null,
      url: c.url ?? null,
    })),
    reviews: reviews.nodes.map((r) => ({
      id: r.databaseId,
      author: loginOf(r.author),
      author_type: typeOf(r.author),
      state: r.state,
      body: r.body ?? '',
      submitted_at: r.submittedAt ?? null,
      last_edited_at: r.lastEditedAt ?? null,
      url: r.url ?? null,
    })),
  }
}

/** Runs looked up for one tick at most: the latest comments' links (a PR may carry many workflow comments). */
const MAX_RUN_LOOKUPS = 20

/** This repository's Actions runs that `github-actions[bot]` comments link to; a link to no run of it is left out. */
async function linkedRuns(
  options: CollectOptions,
  snapshot: Snapshot,
  cache: Map<number, ActionRun | null>,
): Promise<ActionRun[]> {
  const repoUrl = repoUrlOf(snapshot.pr.url)
  const posted = [...snapshot.comments, ...snapshot.reviews, ...snapshot.threads.flatMap((t) => t.comments)]
    .filter((item) => item.author_type === 'Bot' && item.author.toLowerCase() === ACTIONS_LOGIN)
    .sort((a, b) => latestOf(a).localeCompare(latestOf(b)))
  const ids = [...new Set(posted.flatMap((item) => runIdsIn(item.body, repoUrl)))].slice(-MAX_RUN_LOOKUPS)
  for (const id of ids) if (!cache.has(id)) cache.set(id, await readRun(options, id))
  return ids.map((id) => cache.get(id)).filter((run): run is ActionRun => Boolean(run))
}

const latestOf = (item: { created_at?: string | null; submitted_at?: string | null; last_edited_at?: string | null }) =>
  item.last_edited_at ?? item.created_at ?? item.submitted_at ?? ''

/** One run as GitHub's REST API reports it; null when this repository has no such run (a 404). */
async function readRun(options: CollectOptions, id: number): Promise<ActionRun | null> {
  let out: string
  try {
    out = await runGh(['api', `repos/{owner}/{repo}/actions/runs/${id}`], { at: options.at, idempotent: true })
  } catch (error) {
    if (isPairLoopError(error) && /\bHTTP 404\b/.test(String(error.details?.stderr ?? ''))) return null
    throw error
  }
  const run = ghJson(out, `api actions/runs/${id}`) as Node
  const text = (value: unknown) => (typeof value === 'string' ? value : null)
  return {
    id,
    name: text(run?.name),
    path: text(run?.path),
    event: text(run?.event),
    status: text(run?.status),
    run_started_at: text(run?.run_started_at),
    updated_at: text(run?.updated_at),
  }
}

async function allPagesAfter(options: CollectOptions, threadId: string, cursor: string | null): Promise<Node[]> {
  const nodes: Node[] = []
  let after = cursor
  for (let page = 0; page < 1000 && after; page++) {
    const data = await graphql(options.at, THREAD_COMMENTS, { id: threadId, first: pageSize(options), after })
    const connection: Page | undefined = (data as Node).node?.comments
    if (!connection) break
    nodes.push(...connection.nodes)
    after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null
  }
  return nodes
}

function threadComment(c: Node): SnapshotComment {
  return {
    id: c.id,
    database_id: c.databaseId,
    author: loginOf(c.author),
    author_type: typeOf(c.author),
    body: c.body ?? '',
    created_at: c.createdAt ?? null,
    last_edited_at: c.lastEditedAt ?? null,
    url: c.url ?? null,
    review_id: c.pullRequestReview?.databaseId ?? null,
  }
}

/** GraphQL names a bot `github-actions` where REST says `github-actions[bot]`: the REST spelling, everywhere. */
function loginOf(author: Node): string {
  if (!author?.login) return 'ghost'
  return author.__typename === 'Bot' && !author.login.endsWith('[bot]') ? `${author.login}[bot]` : author.login
}

const typeOf = (author: Node): string => (author?.__typename === 'Bot' ? 'Bot' : 'User')

const PASSING = new Set(['SUCCESS', 'NEUTRAL', 'SKIPPED'])

/** A CheckRun (status, conclusion) or a legacy StatusContext (state), as pass, pending or fail. */
function checkOf(node: Node): Snapshot['checks'][number] {
  if (node.__typename === 'StatusContext') {
    const state = String(node.state)
    const status = state === 'SUCCESS' ? 'pass' : state === 'PENDING' || state === 'EXPECTED' ? 'pending' : 'fail'
    return { name: node.context, status, url: node.targetUrl ?? null }
  }
  const status = node.status !== 'COMPLETED' ? 'pending' : PASSING.has(String(node.conclusion)) ? 'pass' : 'fail'
  return { name: node.name, status, url: node.detailsUrl ?? null }
}
