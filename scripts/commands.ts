// The command table: name → lazy loader, so a command loads only what it uses.
// Its own module (not the dispatcher's) so tests can list the commands without running the entry point.
import type { ScriptLoader } from '../lib/cli/cli.ts'

export const COMMANDS: Record<string, ScriptLoader> = {
  setup: () => import('./setup.ts'),
  start: () => import('./start.ts'),
  'coder-done': () => import('./coder-done.ts'),
  review: () => import('./review.ts'),
  'budget-check': () => import('./budget-check.ts'),
  reply: () => import('./reply.ts'),
  finish: () => import('./finish.ts'),
  status: () => import('./status.ts'),
  findings: () => import('./findings.ts'),
  codes: () => import('./codes.ts'),
  demo: () => import('./demo.ts'),
  'install-skill': () => import('./install-skill.ts'),
  trust: () => import('./trust.ts'),
  report: () => import('./report.ts'),
  'pr-check': () => import('./pr-check.ts'),
  'pr-reply': () => import('./pr-reply.ts'),
  'pr-resolve': () => import('./pr-resolve.ts'),
  'pr-flag': () => import('./pr-flag.ts'),
  'stop-hook': () => import('./stop-hook.ts'),
  verify: () => import('./verify.ts'),
  'pr-stop': () => import('./pr-stop.ts'),
  mcp: () => import('./mcp.ts'),
}
