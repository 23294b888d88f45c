// The loop's steps as MCP tools (`pair-loop mcp`): each one names the command it runs and the few arguments it takes.
// Only what asks is an argument (the task, a summary, a reply, a body, a run id); what decides — the reviewer, the
// budget, the round cap, going over either, where a file is written, the environment — stays the person's, in the home
// config: no tool has an argument for it, and an argument a tool does not list is refused.

export type ArgSpec =
  | { kind: 'string'; flag: string; description: string; required?: boolean; pattern?: RegExp }
  /** A text given on the command's stdin (its flag then reads `-`): bodies and summaries of any length. */
  | { kind: 'text'; flag: string; description: string; required?: boolean }
  | { kind: 'integer'; flag: string; description: string; min: number; required?: boolean }
  | { kind: 'boolean'; flag: string; description: string }
  | { kind: 'enum'; flag: string; description: string; options: readonly string[]; required?: boolean }

/** A tool runs the pair-loop command of its own name. */
export interface ToolSpec {
  description: string
  args: Readonly<Record<string, ArgSpec>>
}

const RUN: ArgSpec = {
  kind: 'string',
  flag: 'run',
  description: "the run's id (default: the active run of the repository at cwd)",
  pattern: /^[A-Za-z0-9._-]{1,100}$/,
}
const THREAD: ArgSpec = {
  kind: 'string',
  flag: 'thread',
  description: 'a review thread id (PRRT_…) from pr-check',
  pattern: /^[A-Za-z0-9_=-]{1,200}$/,
}

/** Every tool by its name: `mcp__pair-loop__<name>` in Claude Code; in Codex `<name>` with `_` for `-`, namespace `mcp__pair_loop`. */
export const TOOLS: Readonly<Record<string, ToolSpec>> = {
  start: {
    description:
      "Open a pair-loop run in the repository at cwd (clean tree). Reviewer, rounds and budget come from the person's config.",
    args: { task: { kind: 'string', flag: 'task', description: 'what the coder is to do', required: true } },
  },
  'coder-done': {
    description: "Hand this round's change over for review (records the summary and the diff against the base).",
    args: {
      run: RUN,
      summary: { kind: 'text', flag: 'summary-file', description: 'what was done this round' },
      findings_addressed: { kind: 'integer', flag: 'findings-addressed', description: 'findings answered', min: 0 },
    },
  },
  review: {
    description:
      "Run the person's reviewer on the change and wait a bounded time: a verdict with findings, or in_progress (call review again to wait again).",
    args: {
      run: RUN,
      pr: { kind: 'boolean', flag: 'pr', description: "the final round on the pushed PR's diff" },
    },
  },
  reply: {
    description: "Record the coder's answer to one reviewer finding, once.",
    args: {
      run: RUN,
      finding: {
        kind: 'string',
        flag: 'finding',
        description: 'the finding id, round.number (e.g. 1.2)',
        required: true,
        pattern: /^\d+\.\d+$/,
      },
      disposition: {
        kind: 'enum',
        flag: 'disposition',
        description: 'how the coder answers it',
        options: ['fixed', 'wont-fix', 'question', 'ack'],
        required: true,
      },
      body: { kind: 'text', flag: 'body-file', description: 'the answer', required: true },
      post_pr: { kind: 'boolean', flag: 'post-pr', description: "also post it on the run's PR, once" },
    },
  },
  'budget-check': {
    description: "The run's cost so far against the person's limit, per round and role.",
    args: { run: RUN },
  },
  status: {
    description: "The run's phase, round, next step, open findings and budget.",
    args: { run: RUN },
  },
  findings: {
    description: "The run's findings with their replies.",
    args: { run: RUN },
  },
  finish: {
    description: 'Close the run (APPROVED only after an approving review); optionally open its PR with gh, once.',
    args: {
      run: RUN,
      verdict: {
        kind: 'enum',
        flag: 'verdict',
        description: 'how the run ends',
        options: ['APPROVED', 'CHANGES_REQUESTED', 'ABANDONED'],
        required: true,
      },
      create_pr: { kind: 'boolean', flag: 'create-pr', description: 'open the PR with gh' },
      draft: { kind: 'boolean', flag: 'draft', description: 'with create_pr: as a draft' },
      pr: { kind: 'integer', flag: 'pr', description: 'the number of a PR already opened for the run', min: 1 },
    },
  },
  'pr-check': {
    description: "Read the run's PR once: checks, reviews, threads; says what to do next.",
    args: { run: RUN },
  },
  'pr-reply': {
    description: 'Post one answer on the PR, once per reviewer comment (thread, comment or review).',
    args: {
      run: RUN,
      thread: THREAD,
      comment: { kind: 'integer', flag: 'comment', description: 'a conversation comment id', min: 1 },
      review: { kind: 'integer', flag: 'review', description: 'a review id', min: 1 },
      body: { kind: 'text', flag: 'body-file', description: 'the answer', required: true },
    },
  },
  'pr-resolve': {
    description: 'Resolve one review thread on the PR and confirm it.',
    args: { run: RUN, thread: { ...THREAD, required: true } },
  },
  verify: {
    description: "Check that the PR head's tree is the tree the reviewer approved.",
    args: { run: RUN },
  },
}

/** The MCP server's name in the person's CLI configs: its tools are `mcp__pair-loop__<tool>`. */
export const SERVER_NAME = 'pair-loop'

/** Claude Code's name of a tool (Codex: the name with `_` for `-` in the namespace `mcp__pair_loop`, found with tool_search). */
export const claudeToolName = (tool: string) => `mcp__${SERVER_NAME}__${tool}`
