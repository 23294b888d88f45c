// A command that writes $PAIR_LOOP_HOME, run where the home is read-only: a coder's sandbox (Codex's workspace-write
// and Claude Code's Bash sandbox mount it read-only). Said before anything is written, naming the MCP tool that does
// the same step from outside the sandbox — never a grant to ask the person for.
import { accessSync, constants, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Context } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'

/**
 * The commands that write the home, each by its `pair-loop mcp` tool (the same name), or null for a person's command.
 * test/mcp-server.test.ts holds the tools to lib/mcp/tools.ts.
 */
export const HOME_WRITERS: Readonly<Record<string, string | null>> = {
  start: 'start',
  'coder-done': 'coder-done',
  review: 'review',
  reply: 'reply',
  'budget-check': 'budget-check',
  finish: 'finish',
  'pr-check': 'pr-check',
  'pr-reply': 'pr-reply',
  'pr-resolve': 'pr-resolve',
  'pr-flag': null,
  'pr-stop': null,
  trust: null,
}

const READ_ONLY = new Set(['EROFS', 'EACCES', 'EPERM'])

/** `io_error` naming the MCP tool when `command` writes the home and the home cannot be written from here. */
export function checkHomeWritable(ctx: Context, command: string): void {
  if (!Object.hasOwn(HOME_WRITERS, command)) return
  const tool = HOME_WRITERS[command]
  let probe = ctx.home
  while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe)
  let errno: string | undefined
  try {
    accessSync(probe, constants.W_OK)
    return
  } catch (error) {
    errno = (error as NodeJS.ErrnoException).code
  }
  if (!errno || !READ_ONLY.has(errno)) return
  const instead = tool
    ? `call the MCP tool mcp__pair-loop__${tool} instead (Codex: \`${tool.replaceAll('-', '_')}\` in the mcp__pair_loop namespace, found with tool_search), which the person's config runs outside the sandbox (\`pair-loop mcp --install\` writes it)`
    : `\`${command}\` is the person's to run, outside the sandbox`
  fail(
    'io_error',
    `PAIR_LOOP_HOME (${ctx.home}) cannot be written from here (${errno}): a coder's sandbox keeps pair-loop's state out of its reach; ${instead}. Nothing was changed`,
    { path: ctx.home, errno, ...(tool ? { mcp_tool: `mcp__pair-loop__${tool}` } : {}) },
  )
}
