// What pair-loop knows of one agent CLI, in one place (lib/agents/<vendor>.ts): how it is called as a reviewer, which
// of its flags it relies on, how its output reads, where its transcripts live and whose prices its usage follows.
import type { Config } from '../run/config.ts'
import type { Vendor } from '../run/vendors.ts'
import type { ReviewerReply } from './reply.ts'

/** The wanted flags its `--help` lists (lib/review/capabilities.ts reads and caches them). */
export type CliFlags = ReadonlySet<string>

/** What one call puts on its command line besides the choice itself. */
export interface ReviewerCall {
  /** Where codex writes its final message. */
  lastMessageFile: string
  /** The session the call is to have, when the CLI names sessions (`--session-id`). */
  sessionId: string | null
  /** A file holding ANSWER_SCHEMA (`codex exec --output-schema`). */
  schemaFile: string
  /** What is left of the run's limit (`claude -p --max-budget-usd`), or null for no cap. */
  maxBudgetUsd: number | null
  /** The reviewer's own session from the last round, to continue (Continuity), or null for a fresh one. */
  resume?: string | null
}

/** Where a reviewer call reads and runs: the read-only copy of the snapshot, and its working folder. */
export interface ReviewerPlaces {
  /** The reviewer's read-only copy of the snapshot (lib/snapshot/copy.ts). */
  copy: string
  /** Where it runs: an empty folder outside the repository when `readsCopyFrom` says so, else the copy. */
  cwd: string
  model: string | null
  flags: CliFlags
}

/** Whose API the usage figures follow: how cache reads, writes and thoughts are counted and priced. */
export type UsageFamily = 'anthropic' | 'openai' | 'google'

export interface AgentModule {
  name: Vendor
  /** Its program as the person's config names it (a name to look up, or a path). */
  bin: (config: Config['pair_loop']) => string
  /** Where it keeps its config and transcripts: the variable, the person's config key, the default under HOME. */
  home: {
    env: string
    key: 'claude_config_dir' | 'codex_home' | 'gemini_cli_home'
    defaultIn: (home: string) => string
  }
  /** The arguments that print its flags, and the flags pair-loop looks for there (a missing one turns its use off). */
  help: { argv: readonly string[]; wanted: readonly string[] }
  reviewer: {
    /** With these flags it reads the copy from an empty folder outside it (instruction files in the copy stay unread). */
    readsCopyFromOutside: (flags: CliFlags) => boolean
    argv: (bin: string, call: ReviewerCall, places: ReviewerPlaces) => string[]
    /** Its final answer can be held to ANSWER_SCHEMA. */
    structured: (flags: CliFlags) => boolean
    /** pair-loop names its session before the call (`--session-id`). */
    namesSession: (flags: CliFlags) => boolean
    /** It can continue an earlier session by its id (`--resume`, `exec resume`), read-only as the first call. */
    resumes: (flags: CliFlags) => boolean
    /** The usage it reports for a call that continued a session is the session's running total, not the call's. */
    reportsSessionTotal: boolean
    /** It stops itself at a USD limit (`--max-budget-usd`). */
    spendCap: (flags: CliFlags) => boolean
    /** Variables taken out of its environment (they would load the repository's instructions). */
    unsetEnv: readonly string[]
    /** Variables it always gets (quiet, headless), set after the person's; its `--help` is read with them too. */
    env: Readonly<Record<string, string>>
    /**
     * Base names of the files it loads as instructions from every folder it may read, whatever its flags (`env`: the
     * reviewer's, where its settings are found): its copy leaves them out (their change is in the diff).
     */
    contextFiles: (env: NodeJS.ProcessEnv) => readonly string[]
    /** The prompt as it goes on its stdin (escaped where the CLI would read markup in it). */
    stdin: (prompt: string) => string
    /** The session its first lines of output name (codex's `thread.started`), before the call ends; or null. */
    sessionInHead: (head: string) => string | null
    /** A named session's transcript while it is written (the review watch reads it), or null. */
    transcriptOf: (cwd: string, sessionId: string, env: NodeJS.ProcessEnv) => string | null
  }
  /** Its output read as a reply, or null when it is not in this CLI's format. */
  parse: (stdout: string, lastMessage?: string | null) => ReviewerReply | null
  /** The error a call that printed nothing on stdout reported on stderr in this CLI's format, or null. */
  parseError: (stderr: string) => ReviewerReply | null
  usage: UsageFamily
}
