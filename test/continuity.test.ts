// Continuity: which round continues the reviewer's own session of the last round (lib/review/continuity.ts), and the
// command line that continues it (lib/agents/): the same read-only switches as a fresh call.
import { describe, expect, it } from 'vitest'
import { agentOf } from '../lib/agents/registry.ts'
import { resumeBaseline, sessionToResume, usageSince } from '../lib/review/continuity.ts'

const ENDED = Date.parse('2026-12-08T01:00:00Z')
const round = (reviewer: Record<string, unknown> | null) => ({ reviewer }) as never
const lastReview = { tool: 'codex', fallback_used: false, session_id: 'thread-1', at: new Date(ENDED).toISOString() }
const codexChoice: { tool: string; kind: string; fallback_used: boolean; resumes: boolean } = {
  tool: 'codex',
  kind: 'vendor',
  fallback_used: false,
  resumes: true,
}

describe('sessionToResume', () => {
  const cases: Array<[string, unknown[], Partial<typeof codexChoice>, number, number, string | null]> = [
    ['continues the last session 299 s after its call ended', [round(lastReview)], {}, 300, 299_000, 'thread-1'],
    ['starts afresh 301 s after, the cache gone cold', [round(lastReview)], {}, 300, 301_000, null],
    ['starts afresh when the person set reviewer_resume_s to 0', [round(lastReview)], {}, 0, 1_000, null],
    ['starts afresh when the CLI cannot resume', [round(lastReview)], { resumes: false }, 300, 1_000, null],
    [
      'starts afresh with another reviewer than last time',
      [round(lastReview)],
      { tool: 'claude' } as never,
      300,
      1_000,
      null,
    ],
    [
      'starts afresh after a fallback changed the reviewer',
      [round(lastReview)],
      { fallback_used: true },
      300,
      1_000,
      null,
    ],
    ['never resumes a command', [round(lastReview)], { kind: 'custom' } as never, 300, 1_000, null],
    ['has nothing to resume in round 1', [round(null)], {}, 300, 1_000, null],
    [
      'continues the last review, not an earlier one',
      [round({ ...lastReview, session_id: 'old' }), round(lastReview), round(null)],
      {},
      300,
      1_000,
      'thread-1',
    ],
  ]
  for (const [name, rounds, choice, resumeS, after, expected] of cases)
    it(name, () => {
      const run = { rounds } as never
      expect(sessionToResume(run, { ...codexChoice, ...choice } as never, resumeS, ENDED + after)).toBe(expected)
    })
})

describe('the command line that continues a session', () => {
  const call = {
    lastMessageFile: '/r/last.txt',
    sessionId: 'thread-1',
    schemaFile: '/r/s.json',
    maxBudgetUsd: null,
    resume: 'thread-1',
  }
  const places = (flags: string[]) => ({ copy: '/copy', cwd: '/copy', model: null, flags: new Set(flags) })

  it('codex: `exec resume <thread>` with read-only forced through -c (resume takes no -s), no project docs, stdin', () => {
    expect(agentOf('codex').reviewer.argv('/bin/codex', call, places(['--output-schema', 'resume']))).toEqual([
      '/bin/codex',
      'exec',
      'resume',
      '--json',
      '--skip-git-repo-check',
      '-c',
      'sandbox_mode="read-only"',
      '-c',
      'project_doc_max_bytes=0',
      '--output-last-message',
      '/r/last.txt',
      '--output-schema',
      '/r/s.json',
      'thread-1',
      '-',
    ])
  })

  it('claude: --resume in place of --session-id, with the same read-only tools and user settings only', () => {
    const argv = agentOf('claude').reviewer.argv(
      '/bin/claude',
      call,
      places(['--resume', '--session-id', '--setting-sources']),
    )
    expect(argv).toEqual([
      '/bin/claude',
      '-p',
      '--output-format',
      'json',
      '--tools',
      'Read,Grep,Glob',
      '--setting-sources',
      'user',
      '--resume',
      'thread-1',
    ])
  })

  it('gemini: --resume in place of --session-id, still in plan (read-only) mode', () => {
    const argv = agentOf('gemini').reviewer.argv(
      '/bin/gemini',
      call,
      places(['--resume', '--session-id', '--approval-mode']),
    )
    expect(argv).toEqual(['/bin/gemini', '-p', '', '-o', 'json', '--approval-mode', 'plan', '--resume', 'thread-1'])
  })
})

describe("a continued session's running total (codex's exec resume reports the thread's sum)", () => {
  const usage = (input: number, cached: number, output: number) => ({
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_write_5m_tokens: 0,
    cache_write_1h_tokens: 0,
    cached_input_tokens: cached,
    reasoning_output_tokens: 0,
  })

  it('counts what the call added: the total minus the last total reported, never below zero', () => {
    // round 1 reported 9000/0/300; round 2's two responses added 19200 in (18500 cached) and 100 out
    expect(usageSince(usage(28_200, 18_500, 400), usage(9000, 0, 300))).toEqual(usage(19_200, 18_500, 100))
    expect(usageSince(usage(10, 0, 1), usage(20, 5, 2))).toEqual(usage(0, 0, 0))
  })

  it("takes the last round's reported total of that session as the baseline, else its usage", () => {
    const reviewer = (session_id: string, extra: object) => ({
      reviewer: { session_id, usage: usage(1, 0, 1), ...extra },
    })
    const run = { rounds: [reviewer('t1', { session_usage: usage(9000, 0, 300) }), reviewer('t2', {})] } as never
    expect(resumeBaseline(run, 't1')).toEqual(usage(9000, 0, 300))
    expect(resumeBaseline(run, 't2')).toEqual(usage(1, 0, 1))
    expect(resumeBaseline(run, 't3')).toBeNull()
  })
})
