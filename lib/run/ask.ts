// The stops: why the person must decide now, and the command for each answer they may give (`next: "ask-user"`).

export const ASK_REASONS = [
  'round_cap',
  'budget_exceeded',
  'wont_fix_recurring',
  'reviewer_failed_twice',
  'reviewer_unavailable',
  'config_untrusted',
  'pr_escalated',
  'stalemate',
] as const
export type AskReason = (typeof ASK_REASONS)[number]

export interface Choice {
  say: string
  command: string
}
export interface Ask {
  reason: AskReason
  choices: Choice[]
}

const shipAsIs: Choice = { say: 'ship it as it is', command: 'pair-loop finish --verdict CHANGES_REQUESTED' }
const abandon: Choice = { say: 'abandon the run', command: 'pair-loop finish --verdict ABANDONED' }

/** `next: "ask-user"` and its `ask`, for a document or an error's details. */
export const askingFor = (ask: Ask) => ({ next: 'ask-user' as const, ask })

export const askRoundCap = (): Ask => ({
  reason: 'round_cap',
  choices: [{ say: 'one more round', command: 'pair-loop coder-done --over-cap --summary-file -' }, shipAsIs, abandon],
})

/** The PR phase's rounds (`pr_max_rounds`) are used up: one more, the person takes the PR over, or abandon. */
export const askPrRoundCap = (): Ask => ({
  reason: 'round_cap',
  choices: [
    { say: 'one more round', command: 'pair-loop coder-done --over-cap --summary-file -' },
    { say: 'take the PR over yourself', command: 'pair-loop pr-stop --reason "taken over"' },
    abandon,
  ],
})

/** The same findings came back on files nobody changed: one more round, ship with them listed, or abandon. */
export const askStalemate = (): Ask => ({
  reason: 'stalemate',
  choices: [
    { say: 'one more round', command: 'pair-loop coder-done --summary-file -' },
    { say: 'ship it as it is, the open findings listed', command: shipAsIs.command },
    abandon,
  ],
})

export const askBudget = (command: string): Ask => ({
  reason: 'budget_exceeded',
  choices: [{ say: 'go on over the budget', command: `pair-loop ${command} --over-budget` }, shipAsIs, abandon],
})

export const askWontFixBack = (ids: string[]): Ask => ({
  reason: 'wont_fix_recurring',
  choices: [
    ...ids.flatMap((id) => [
      { say: `fix ${id} after all`, command: `pair-loop reply --finding ${id} --disposition fixed --body-file -` },
      {
        say: `keep ${id} as won't-fix`,
        command: `pair-loop reply --finding ${id} --disposition wont-fix --body-file -`,
      },
    ]),
    abandon,
  ],
})

export const askReviewerFailed = (): Ask => ({
  reason: 'reviewer_failed_twice',
  choices: [{ say: 'try the review once more', command: 'pair-loop review' }, shipAsIs, abandon],
})

export const askReviewerUnavailable = (): Ask => ({
  reason: 'reviewer_unavailable',
  choices: [
    {
      say: "install the reviewer's CLI (or list another in pair_loop.reviewers_fallback), then review",
      command: 'pair-loop review',
    },
    { say: 'review with a command of your own', command: 'pair-loop review --reviewer-cmd \'["PROGRAM"]\'' },
    abandon,
  ],
})

export const askUntrusted = (repo: string): Ask => ({
  reason: 'config_untrusted',
  choices: [
    { say: 'trust this content (after reading it)', command: `pair-loop trust --cwd ${repo}` },
    {
      say: 'leave it untrusted: remove or change the file, then run the same command again',
      command: 'pair-loop status',
    },
  ],
})

export const askPrEscalated = (): Ask => ({
  reason: 'pr_escalated',
  choices: [
    { say: 'take the PR over yourself', command: 'pair-loop pr-stop --reason "taken over"' },
    { say: 'let the agent go on after your answer', command: 'pair-loop pr-check' },
  ],
})
