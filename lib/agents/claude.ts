// Claude Code (`claude -p`): read-only tools, the person's settings only, the copy added with --add-dir, the answer held
// to the schema, the session named, its spend capped at what the run has left.
import { join } from 'node:path'
import { ANSWER_SCHEMA } from '../run/grammar.ts'
import { parseClaudeJson } from './claude-output.ts'
import { claudeProjectDir } from './locate.ts'
import type { AgentModule } from './types.ts'

/** `--max-budget-usd` wants a plain decimal: rounded down to a millionth of a dollar, never below one. */
export const budgetArg = (usd: number) => String(Math.max(Math.floor(usd * 1e6), 1) / 1e6)

export const claude: AgentModule = {
  name: 'claude',
  bin: (config) => config.claude_bin,
  home: { env: 'CLAUDE_CONFIG_DIR', key: 'claude_config_dir', defaultIn: (home) => join(home, '.claude') },
  help: {
    argv: ['--help'],
    wanted: ['--json-schema', '--session-id', '--max-budget-usd', '--setting-sources', '--add-dir', '--resume'],
  },
  reviewer: {
    readsCopyFromOutside: (flags) => flags.has('--add-dir'),
    // read-only tools: the reviewer may look around the copy but never edit or run anything
    argv: (bin, call, { copy, cwd, model, flags }) => [
      bin,
      '-p',
      '--output-format',
      'json',
      '--tools',
      'Read,Grep,Glob',
      ...(flags.has('--setting-sources') ? ['--setting-sources', 'user'] : []), // no project or local settings, hooks
      ...(flags.has('--add-dir') && cwd !== copy ? ['--add-dir', copy] : []), // read access to the reviewer's copy
      ...(flags.has('--json-schema') ? ['--json-schema', JSON.stringify(ANSWER_SCHEMA)] : []),
      ...(call.resume && flags.has('--resume')
        ? ['--resume', call.resume] // the same read-only tools and settings: they are given again on every call
        : flags.has('--session-id') && call.sessionId
          ? ['--session-id', call.sessionId]
          : []),
      ...(flags.has('--max-budget-usd') && call.maxBudgetUsd !== null
        ? ['--max-budget-usd', budgetArg(call.maxBudgetUsd)]
        : []),
      ...(model ? ['--model', model] : []),
    ],
    structured: (flags) => flags.has('--json-schema'),
    namesSession: (flags) => flags.has('--session-id'),
    resumes: (flags) => flags.has('--resume') && flags.has('--session-id'),
    reportsSessionTotal: false,
    spendCap: (flags) => flags.has('--max-budget-usd'),
    // set, it makes claude load CLAUDE.md from --add-dir folders whatever --setting-sources says
    unsetEnv: ['CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD'],
    env: {},
    contextFiles: () => [], // its switches keep every instruction file unread
    stdin: (prompt) => prompt,
    sessionInHead: () => null,
    transcriptOf: (cwd, sessionId, env) => join(claudeProjectDir(cwd, env), `${sessionId}.jsonl`),
  },
  parseError: () => null,
  parse: (stdout) => parseClaudeJson(stdout),
  usage: 'anthropic',
}
