#!/usr/bin/env node
// mcp: pair-loop as a stdio MCP server (lib/cli/mcp-server.ts), started by the coder's CLI from the person's config; with
// --install, writes that config for the person (lib/mcp/install.ts, which `pair-loop setup` calls too).
import { join } from 'node:path'
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import { fail } from '../lib/ground/errors.ts'
import type { ScriptLoader } from '../lib/cli/cli.ts'
import type { McpAgent } from '../lib/mcp/install.ts'

/** The commands a tool runs, one per tool (lib/mcp/tools.ts), loaded when called. */
export const TOOL_COMMANDS: Record<string, ScriptLoader> = {
  start: () => import('./start.ts'),
  'coder-done': () => import('./coder-done.ts'),
  review: () => import('./review.ts'),
  reply: () => import('./reply.ts'),
  'budget-check': () => import('./budget-check.ts'),
  status: () => import('./status.ts'),
  findings: () => import('./findings.ts'),
  finish: () => import('./finish.ts'),
  'pr-check': () => import('./pr-check.ts'),
  'pr-reply': () => import('./pr-reply.ts'),
  'pr-resolve': () => import('./pr-resolve.ts'),
  verify: () => import('./verify.ts'),
}

const mcpScript = defineScript({
  name: 'mcp',
  description:
    "Serve the loop's steps as MCP tools on stdin/stdout (for a sandboxed coder); --install writes the person's Claude Code and Codex entries for it.",
  args: {
    install: {
      type: 'boolean',
      description: "write or update pair-loop's MCP entries in your Claude Code and Codex config (idempotent)",
    },
    claude: { type: 'boolean', description: 'with --install: Claude Code only' },
    codex: { type: 'boolean', description: 'with --install: Codex only' },
    'test-home': {
      type: 'boolean',
      description: 'with --install: allow a PAIR_LOOP_HOME in a temp folder (for tests; never for a person)',
    },
  },
  async run(args, io, ctx) {
    const { packageRoot } = await import('../lib/ground/package.ts')
    const root = packageRoot()
    if (!args.install) {
      for (const flag of ['claude', 'codex', 'test-home'] as const)
        if (args[flag]) fail('usage', `--${flag} only goes with --install`, { flag: `--${flag}` })
      const { serveStdio } = await import('../lib/cli/mcp-server.ts')
      await serveStdio({ ctx, commands: TOOL_COMMANDS, version: root?.json.version ?? 'unknown' }, io.signal)
      return { raw: '' } // stdout was the protocol's: nothing more is printed on it
    }
    if (!root) fail('internal', 'cannot find the pair-loop package this runs from')
    const agents: McpAgent[] =
      args.claude || args.codex ? (['claude', 'codex'] as const).filter((a) => args[a]) : ['claude', 'codex']
    const { installMcpEntries, mcpPaths, tempRootsOf } = await import('../lib/mcp/install.ts')
    return {
      ...installMcpEntries({
        command: process.execPath,
        args: [join(root.dir, 'bin', 'pair-loop.cjs'), 'mcp'],
        pairLoopHome: ctx.home,
        agents,
        paths: mcpPaths(ctx.env, ctx.home),
        test: args['test-home'] ?? false,
        tempRoots: tempRootsOf(ctx),
      }),
      next: null,
    }
  },
})

export default mcpScript
if (isMain(import.meta)) void main(mcpScript)
