// The reviewer's prompt: task, answer grammar, the working-tree diff against base, and the conversation so far.
import { renderConversation } from '../handoff.ts'
import { neutraliseInline } from '../neutralise.ts'
import { GRAMMAR } from './grammar.ts'
import { fenced } from '../markdown.ts'
import type { RunState } from '../state.ts'
import type { WorkingDiff } from './diff.ts'

export { type WorkingDiff, workingDiff } from './diff.ts'

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
