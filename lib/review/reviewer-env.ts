// The reviewer's environment is built, not inherited: the command that asks for a review is the coder's, and its
// variables would steer the reviewer (NODE_OPTIONS preloads code into claude, *_BASE_URL points the CLI at another
// "model", CLAUDE_CONFIG_DIR / CODEX_HOME / HOME load another settings file with hooks). Only the allow-list below
// passes from the caller; the person's config (`pair_loop.reviewer_env`) adds the rest.
import { delimiter, dirname } from 'node:path'
import { realPath } from '../agents/locate.ts'
import { AGENT_MODULES } from '../agents/registry.ts'
import type { Config } from '../run/config.ts'
import { personHome } from '../ground/context.ts'

/** Taken from the caller when set: locale, terminal, the user's name, and the vendors' API keys (a key picks who pays,
 * not who answers: without a base URL the CLI still talks to its vendor). */
export const REVIEWER_ENV_ALLOWED = [
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TERM',
  'USER',
  'LOGNAME',
  'ANTHROPIC_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
] as const

/** The system folders a reviewer finds its interpreter and tools in, after its own program's folder. */
const SYSTEM_PATH = ['/usr/local/bin', '/usr/bin', '/bin']

/**
 * The reviewer's environment: the allow-list from `caller`, HOME as the person's (never the caller's), the person's
 * agent folders (each vendor's `home.key`: `claude_config_dir`, …), PATH as the program's own folder and the system's, then each
 * variable `pair_loop.reviewer_env` names (a string: that value; true: the caller's, when set), then `extra`.
 */
export function reviewerEnv(
  caller: NodeJS.ProcessEnv,
  config: Pick<Config, 'pair_loop'>,
  program: string | null,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const name of REVIEWER_ENV_ALLOWED) if (caller[name] !== undefined) env[name] = caller[name]
  env.HOME = personHome()
  const { reviewer_env } = config.pair_loop
  for (const { home } of Object.values(AGENT_MODULES)) {
    const folder = config.pair_loop[home.key]
    if (folder) env[home.env] = folder
  }
  env.PATH = programPath(program)
  for (const [name, value] of Object.entries(reviewer_env ?? {})) {
    if (value !== true) env[name] = value
    else if (caller[name] !== undefined) env[name] = caller[name]
    else delete env[name]
  }
  return { ...env, ...extra }
}

/** The program's own folder (where a Node CLI's `node` usually is, e.g. nvm's bin), as linked and as real, then the system's. */
function programPath(program: string | null): string {
  const own = program?.includes('/') ? [dirname(program), dirname(realPath(program))] : []
  return [...new Set([...own, ...SYSTEM_PATH])].join(delimiter)
}
