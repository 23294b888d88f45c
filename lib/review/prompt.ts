// The reviewer's prompt: task, answer grammar, the working-tree diff against base, and the conversation so far.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execOrFail } from '../exec.ts'
import { HANDOFF_NAME, HANDOFF_TEMP_GLOB } from '../git.ts'
import { renderConversation } from '../handoff.ts'
import { neutraliseInline } from '../neutralise.ts'
import { GRAMMAR } from './grammar.ts'
import { fenced } from '../markdown.ts'
import type { RunState } from '../state.ts'

export interface WorkingDiff {
  stat: string
  diff: string
  bytes: number
  truncated: boolean
}

const EXCLUDE_HANDOFF = `:(top,exclude)${HANDOFF_NAME}`
const EXCLUDE_HANDOFF_TEMPS = `:(top,exclude)${HANDOFF_TEMP_GLOB}`

/**
 * The working tree (untracked files included) against the base commit, through a temporary index,
 * so the user's own index is never touched. Binary files appear by name only (git's default).
 */
export async function workingDiff(repo: string, base: string, maxBytes: number): Promise<WorkingDiff> {
  const dir = mkdtempSync(join(tmpdir(), 'pair-loop-index-'))
  const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') }
  // core.quotePath off: the reviewer reads `src/файл.ts`, not `"src/\321\204\320\260\320\271\320\273.ts"`
  const git = (args: string[]) =>
    execOrFail('git', ['-c', 'core.quotePath=false', ...args], {
      cwd: repo,
      env,
      code: 'git_error',
      timeoutMs: 120_000,
    })
  try {
    await git(['read-tree', base])
    await git(['add', '-A', '--', '.']) // HANDOFF.md is git-excluded; the diff below leaves it out in any case
    const common = [
      'diff',
      '--cached',
      '--no-color',
      '--no-ext-diff',
      '--find-renames',
      base,
      '--',
      '.',
      EXCLUDE_HANDOFF,
      EXCLUDE_HANDOFF_TEMPS,
    ]
    const stat = (await git([...common.slice(0, 5), '--stat=200', ...common.slice(5)])).trimEnd()
    const full = await git(common)
    const bytes = Buffer.byteLength(full)
    if (bytes <= maxBytes) return { stat, diff: full, bytes, truncated: false }
    return { stat, diff: cutAtLine(full, maxBytes), bytes, truncated: true }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** At most `maxBytes` of UTF-8, ending at a whole line. */
function cutAtLine(text: string, maxBytes: number): string {
  const head = Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '')
  const lastNewline = head.lastIndexOf('\n')
  return lastNewline > 0 ? head.slice(0, lastNewline + 1) : head
}

export function buildPrompt(run: RunState, diff: WorkingDiff): string {
  const round = run.rounds.length
  const truncation = diff.truncated
    ? `\n[diff truncated: ${Buffer.byteLength(diff.diff)} of ${diff.bytes} bytes shown; the stat above lists every changed file — read the rest from the repository]\n`
    : ''
  const conversation = renderConversation(run).trim()
  return [
    `You are the reviewer in a pair-loop run (round ${round} of at most ${run.max_rounds}). A coding agent (${run.coder}) changed the repository at ${run.repo} for the task below.`,
    'Review the change as an independent, careful senior engineer. You may read files in the repository; do not modify anything.',
    '',
    '## Task',
    '',
    neutraliseInline(run.task),
    '',
    '## How to answer',
    '',
    GRAMMAR,
    '',
    'The conversation below shows the coder\'s replies to earlier findings. Check findings answered "fixed". Read the reason given for "wont-fix" or "question"; raise a finding again only if it is still wrong.',
    '',
    `## The change (working tree against base ${run.base_sha.slice(0, 12)}, untracked files included)`,
    '',
    fenced(diff.stat || '(no changes)', 'text'),
    '',
    fenced(diff.diff || '(empty diff)', 'diff'),
    truncation,
    '## Conversation so far',
    '',
    conversation ? fenced(conversation, 'markdown') : '(none)',
    '',
  ].join('\n')
}

/** The follow-up when an answer had no verdict line: stricter, with the answer quoted back. */
export function buildReask(originalPrompt: string, previousAnswer: string): string {
  const quoted = previousAnswer.length > 20_000 ? `${previousAnswer.slice(0, 20_000)}\n[…]` : previousAnswer
  return [
    originalPrompt,
    '## Your previous answer had no verdict line',
    '',
    'Your previous answer (below) did not end with a verdict line. Answer again in the grammar above: the numbered findings, then exactly one line `VERDICT: APPROVED` or `VERDICT: CHANGES_REQUESTED` on its own, as the last line.',
    '',
    fenced(quoted, 'text'),
    '',
  ].join('\n')
}
