// Test tools of the PR phase: snapshots in DESIGN.md's shape, and a fake GitHub (fixtures/gh with a world file) bound
// to a sandbox whose run has a PR.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type * as v from 'valibot'
import type { Snapshot as SnapshotSchema, Snapshot, SnapshotComment, SnapshotThread } from '../lib/run/pr-schema.ts'
import { recordReview, ROOT, sandbox, tempDir, writeTestHomeConfig } from './_helpers.ts'
import { expectOk, writeChange } from './_expect.ts'

export const T0 = '2026-01-10T10:00:00.000Z'
/** `minutes` after T0. */
export const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString()

export const BOT = 'coderabbitai[bot]'
export const ME = 'me'

export function comment(
  databaseId: number,
  author: string,
  body: string,
  minutes = 0,
  type = author.endsWith('[bot]') ? 'Bot' : 'User',
): SnapshotComment {
  return {
    id: `PRRC_${databaseId}`,
    database_id: databaseId,
    author,
    author_type: type,
    body,
    created_at: at(minutes),
    last_edited_at: null,
    url: `https://github.com/acme/demo/pull/7#discussion_r${databaseId}`,
    review_id: null,
  }
}

export function thread(id: string, comments: SnapshotComment[], extra: Partial<SnapshotThread> = {}): SnapshotThread {
  return { id, path: 'src/a.ts', line: 3, is_resolved: false, is_outdated: false, comments, ...extra }
}

export function issueComment(id: number, author: string, body: string, minutes = 0) {
  return {
    id,
    author,
    author_type: author.endsWith('[bot]') ? 'Bot' : 'User',
    body,
    created_at: at(minutes),
    last_edited_at: null as string | null,
    url: `https://github.com/acme/demo/pull/7#issuecomment-${id}`,
  }
}

export function review(id: number, author: string, state: Snapshot['reviews'][number]['state'], body: string) {
  return {
    id,
    author,
    author_type: author.endsWith('[bot]') ? 'Bot' : 'User',
    state,
    body,
    submitted_at: at(1),
    last_edited_at: null as string | null,
    url: null,
  }
}

/** A bot summary with findings in pair-loop's grammar and a verdict line. */
export function botSummary(
  id: number,
  verdict: 'APPROVED' | 'CHANGES_REQUESTED',
  findings: string[] = [],
  minutes = 5,
) {
  const lines = findings.map((text, i) => `${i + 1}. [bug/major] src/a.ts:${i + 3} — ${text}`)
  return issueComment(id, BOT, ['Review summary', '', ...lines, '', `VERDICT: ${verdict}`].join('\n'), minutes)
}

/** A review bot's summary from fixtures/pr-bots/ (one file per format and state). */
export const botSample = (name: string) => readFileSync(join(ROOT, 'fixtures', 'pr-bots', `${name}.md`), 'utf8')

/** A green PR: open, mergeable, CI passing, nothing to answer, no bot. */
export function snapshot(overrides: Partial<Omit<Snapshot, 'pr'>> & { pr?: Partial<Snapshot['pr']> } = {}): Snapshot {
  const { pr, ...rest } = overrides
  return {
    version: 1,
    pr: {
      number: 7,
      url: 'https://github.com/acme/demo/pull/7',
      head: 'a'.repeat(40),
      branch: 'feat',
      base: 'main',
      author: ME,
      state: 'OPEN',
      mergeable: 'MERGEABLE',
      review_decision: null,
      merged_at: null,
      ...pr,
    },
    checks: [{ name: 'ci', status: 'pass', url: 'https://ci.example/1' }],
    threads: [],
    comments: [],
    reviews: [],
    ...rest,
  }
}

// ---------------------------------------------------------------- the fake GitHub

export const FAKE_GH = join(ROOT, 'fixtures', 'gh')

/** The fake's world: a snapshot's data with raw checks (CheckRun / StatusContext) and the fake's own knobs. */
export type World = Omit<v.InferInput<typeof SnapshotSchema>, 'checks' | 'version'> & {
  checks: Array<Record<string, unknown>>
  page_size?: number
  resolve_mode?: 'confirm' | 'refuse' | 'null_thread' | 'no_field'
  move_head_on_meta?: string[]
  faults?: Array<{ match?: string; status: number | 'timeout'; times?: number }>
  viewer?: string
  diff?: string
  posted_reviews?: unknown[]
}

export function world(overrides: Partial<World> = {}): World {
  const { version: _version, checks: _checks, ...base } = snapshot()
  return {
    ...base,
    checks: [{ type: 'CheckRun', name: 'ci', status: 'COMPLETED', conclusion: 'SUCCESS', url: 'https://ci.example/1' }],
    page_size: 2,
    ...overrides,
  }
}

/**
 * A sandbox whose run is finished with the world's PR recorded, and a fake gh on PATH answering from a world file; `config` is
 * the home config.json, written before the run starts (a run freezes its config at start). The run is approved (its
 * reviewer approved one round, and the world's head carries that tree) unless `verdict` says how else it ended.
 */
export async function prSandbox(
  initial: World = world(),
  config?: object,
  pr = initial.pr.number,
  { verdict = 'APPROVED' }: { verdict?: 'APPROVED' | 'CHANGES_REQUESTED' | 'ABANDONED' } = {},
) {
  const sb = sandbox()
  if (config) writeTestHomeConfig(sb.home, config as Record<string, Record<string, unknown>>) // the test person's, plus these
  const ghDir = tempDir('pl-gh-')
  const worldFile = join(ghDir, 'world.json')
  writeFileSync(worldFile, JSON.stringify(initial, null, 2))
  const env = {
    PATH: `${FAKE_GH}${delimiter}${sb.env.PATH}`,
    FAKE_GH_DIR: ghDir,
    FAKE_GH_WORLD: worldFile,
    PAIR_LOOP_GH_RETRY_MS: '20',
    PAIR_LOOP_RESOLVE_WAIT_MS: '0',
    PAIR_LOOP_GH_PAGE_SIZE: '2',
  }
  const cli = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
    sb.cli(args, { input: options.input, env: { ...env, ...options.env } })
  /** The real CLI: for callers at once (a claim is a process's, and one process never races itself). */
  const cliProcess = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
    sb.cliProcess(args, { input: options.input, env: { ...env, ...options.env } })
  const runId: string = expectOk(await cli(['start', '--task', 'demo task'])).run_id
  if (verdict === 'APPROVED') {
    writeChange(sb)
    expectOk(await cli(['coder-done', '--summary', 'round one']))
    const approved = await recordReview(sb.home, runId, 'VERDICT: APPROVED')
    const tree = approved.rounds.at(-1)?.reviewer?.tree
    // GitHub's head carries the approved bytes (a world that sets its own head_tree ships other ones)
    const w = JSON.parse(readFileSync(worldFile, 'utf8')) as World
    writeFileSync(worldFile, JSON.stringify({ ...w, pr: { head_tree: tree, ...w.pr } }, null, 2))
  }
  expectOk(await cli(['finish', '--verdict', verdict, '--pr', String(pr)]))
  rmSync(join(ghDir, 'calls.log'), { force: true }) // the setup's calls are not the test's
  return {
    ...sb,
    env: { ...sb.env, ...env },
    cli,
    cliProcess,
    runId,
    ghDir,
    read: (): World => JSON.parse(readFileSync(worldFile, 'utf8')),
    write: (next: World) => writeFileSync(worldFile, JSON.stringify(next, null, 2)),
    change: (edit: (w: World) => void) => {
      const w = JSON.parse(readFileSync(worldFile, 'utf8')) as World
      edit(w)
      writeFileSync(worldFile, JSON.stringify(w, null, 2))
    },
    /** Every gh call so far, as argv. */
    calls: (): string[][] =>
      existsSync(join(ghDir, 'calls.log'))
        ? readFileSync(join(ghDir, 'calls.log'), 'utf8')
            .split('--\n')
            .filter(Boolean)
            .map((call) => call.trimEnd().split('\n'))
        : [],
  }
}

/** The GraphQL operation or REST call a logged gh call made. */
export function operationOf(call: string[]): string {
  const query = call.find((arg) => arg.startsWith('query='))
  if (query) return /^query=(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'graphql'
  return call.slice(0, 4).join(' ')
}

/** docs/pr-phase.md's pr-check scenario ("After the PR"): a failing check, a review bot's thread, its summary asking for changes. */
export const README_SCENARIO: World = {
  pr: {
    number: 42,
    url: 'https://github.com/acme/app/pull/42',
    head: '9f2c1e7a4b3d5c6e8f9a0b1c2d3e4f5a6b7c8d9e',
    branch: 'feat/retry',
    base: 'main',
    author: 'alice-dev',
    state: 'OPEN',
    mergeable: 'MERGEABLE',
    review_decision: 'REVIEW_REQUIRED',
    merged_at: null,
  },
  checks: [
    {
      type: 'CheckRun',
      name: 'test',
      status: 'COMPLETED',
      conclusion: 'FAILURE',
      url: 'https://github.com/acme/app/actions/runs/7/job/1',
    },
    {
      type: 'CheckRun',
      name: 'lint',
      status: 'COMPLETED',
      conclusion: 'SUCCESS',
      url: 'https://github.com/acme/app/actions/runs/7/job/2',
    },
  ],
  threads: [
    {
      id: 'PRRT_kwDOAbc123',
      path: 'src/http.ts',
      line: 42,
      is_resolved: false,
      is_outdated: false,
      comments: [
        {
          id: 'PRRC_kwDOAbc456',
          database_id: 3897681281,
          author: 'coderabbitai[bot]',
          author_type: 'Bot',
          body: 'The retry loop also retries on 4xx responses other than 429; those will never succeed.',
          created_at: '2026-11-30T09:12:04Z',
          url: 'https://github.com/acme/app/pull/42#discussion_r3897681281',
        },
      ],
    },
  ],
  comments: [
    {
      id: 5483377990,
      author: 'coderabbitai[bot]',
      author_type: 'Bot',
      body: 'Review summary\n\n1. [bug/major] src/http.ts:42 — retries 4xx responses other than 429\n\nVERDICT: CHANGES_REQUESTED',
      created_at: '2026-11-30T09:12:10Z',
      url: 'https://github.com/acme/app/pull/42#issuecomment-5483377990',
    },
  ],
  reviews: [],
  page_size: 100,
}

/** The REST posts among the fake gh's calls (`api … --method POST`, wherever the flag stands). */
export const posts = (calls: string[][]) =>
  calls.filter((call) => call[0] === 'api' && call[call.indexOf('--method') + 1] === 'POST')
