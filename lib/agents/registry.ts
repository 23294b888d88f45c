// Every agent CLI pair-loop knows, by name: adding one is its module and its line here (the type asks for both).
import type { Vendor } from '../run/vendors.ts'
import { userHome } from '../ground/context.ts'
import { claude } from './claude.ts'
import { codex } from './codex.ts'
import { gemini } from './gemini.ts'
import type { AgentModule } from './types.ts'

export const AGENT_MODULES: Readonly<Record<Vendor, AgentModule>> = { claude, codex, gemini }

export const agentOf = (name: Vendor): AgentModule => AGENT_MODULES[name]

/** Where the vendor keeps its config and transcripts for `env`: its variable, else its default under env's home. */
export function agentHome(name: Vendor, env: NodeJS.ProcessEnv): string {
  const { home } = agentOf(name)
  return (env[home.env] || home.defaultIn(userHome(env))).normalize('NFC')
}
