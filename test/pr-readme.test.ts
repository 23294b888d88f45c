// README's "After the PR" shows a real pr-check document: the same scenario against the fake GitHub prints it again,
// field for field (only the run's id and the snapshot's path differ from run to run).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './_helpers.ts'
import { expectOk } from './_expect.ts'
import { prSandbox, type World } from './_pr.ts'

/** The scenario: a failing check, a review bot's thread, and the bot's summary asking for changes. */
const SCENARIO: World = {
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

function shownDocument(): Record<string, unknown> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## After the PR'), readme.indexOf('## Cost and budget'))
  return JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!)
}

describe('README: After the PR', () => {
  it('shows the document pr-check prints for its scenario', async () => {
    const sb = await prSandbox(SCENARIO)
    const { run_id: _run, snapshot_path: _path, ...printed } = expectOk(await sb.cli(['pr-check']))
    const { run_id: _shownRun, snapshot_path: _shownPath, ...shown } = shownDocument()
    expect(printed).toEqual(shown)
  })
})
