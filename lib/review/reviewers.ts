// Which reviewer runs and how: codex, claude or a custom command, with the other vendor as fallback.
import { accessSync, constants } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import type { Config } from '../config.ts'
import { fail } from '../errors.ts'
import type { Agent, RunState } from '../state.ts'

export interface ReviewerChoice {
  tool: 'claude' | 'codex' | 'custom'
  fallback_used: boolean
  /** The model asked for (config `reviewer_model`), when it applies to this reviewer; a fallback uses its own default. */
  model: string | null
  /** The command line; `lastMessageFile` is where codex writes its final message. */
  argv: (lastMessageFile: string) => string[]
}

export function findExecutable(bin: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | null {
  const candidates = bin.includes('/')
    ? [isAbsolute(bin) ? bin : resolve(cwd, bin)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, bin))
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return null
}

export function reviewerArgv(
  tool: Agent,
  bin: string,
  repo: string,
  model: string | null,
): (lastMessageFile: string) => string[] {
  if (tool === 'codex') {
    return (lastMessageFile) => [
      bin,
      'exec',
      '--json',
      '--sandbox',
      'read-only',
      '--skip-git-repo-check',
      '-C',
      repo,
      '--output-last-message',
      lastMessageFile,
      ...(model ? ['-m', model] : []),
      '-',
    ]
  }
  // read-only tools: the reviewer may look around the repository but never edit or run anything
  return () => [bin, '-p', '--output-format', 'json', '--tools', 'Read,Grep,Glob', ...(model ? ['--model', model] : [])]
}

/** A custom command wins; else the run's reviewer, else the other vendor's CLI (`fallback_used`); else `reviewer_unavailable`. */
export function chooseReviewer(
  run: RunState,
  config: Config,
  reviewerCmd: string[] | null,
  env: NodeJS.ProcessEnv = process.env,
): ReviewerChoice {
  const custom = reviewerCmd ?? config.pair_loop.reviewer_cmd
  if (custom)
    return { tool: 'custom', fallback_used: false, model: config.pair_loop.reviewer_model, argv: () => custom }
  const bins: Record<Agent, string> = { claude: config.pair_loop.claude_bin, codex: config.pair_loop.codex_bin }
  const other: Agent = run.reviewer === 'claude' ? 'codex' : 'claude'
  for (const [tool, fallback_used] of [
    [run.reviewer, false],
    [other, true],
  ] as const) {
    const path = findExecutable(bins[tool], env, run.repo)
    // reviewer_model names a model of the configured reviewer's vendor: a fallback uses its own default
    const model = fallback_used ? null : config.pair_loop.reviewer_model
    if (path) return { tool, fallback_used, model, argv: reviewerArgv(tool, path, run.repo, model) }
  }
  fail(
    'reviewer_unavailable',
    `neither ${bins[run.reviewer]} nor ${bins[other]} is on PATH, and no reviewer command is set (--reviewer-cmd or pair_loop.reviewer_cmd)`,
    {
      tried: [bins[run.reviewer], bins[other]],
    },
  )
}

/** `--reviewer-cmd '["sh","review.sh"]'`: a JSON array of strings, or `usage`. */
export function parseReviewerCmd(value: string | undefined): string[] | null {
  if (value === undefined) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {}
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((part) => typeof part === 'string' && part.length > 0)
  ) {
    fail(
      'usage',
      `--reviewer-cmd must be a JSON array of strings, e.g. '["sh","review.sh"]', got ${JSON.stringify(value)}`,
      { flag: '--reviewer-cmd' },
    )
  }
  return parsed as string[]
}
