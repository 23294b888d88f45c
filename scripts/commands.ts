// The command table: name → lazy loader, so a command loads only what it uses.
// Its own module (not the dispatcher's) so demo can run commands without importing the entry point.
import type { ScriptDef } from '../lib/cli.ts'

// biome-ignore lint/suspicious/noExplicitAny: each command declares its own flags; the table only loads and runs them
export type Loader = () => Promise<{ default: ScriptDef<any> }>

export const COMMANDS: Record<string, Loader> = {
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
}
