// How each coder CLI's transcripts are found and read for the ledger, one entry per vendor (the type asks for every
// one in lib/run/vendors.ts): its sessions in a repository, each session's files, a file scanned (incrementally) and
// summed into the run's round windows. A vendor whose transcripts pair-loop cannot read has null: `start` refuses it as
// a coder (its spend would go uncounted).
import { basename } from 'node:path'
import type { RunState } from '../run/state.ts'
import type { Vendor } from '../run/vendors.ts'
import { scanClaude, sumClaude, sumClaudeFile } from './claude.ts'
import { scanCodex, sumCodex, sumCodexFile } from './codex.ts'
import { scanGemini, sumGemini, sumGeminiFile } from './gemini-scan.ts'
import { geminiDir, geminiSessionFiles } from './gemini-transcript.ts'
import type { Source } from './ledger-types.ts'
import { claudeSessionFiles, codexRolloutForThread, subagentFiles } from '../agents/locate.ts'
import type { PriceBook } from './pricing.ts'
import { claudeSessions, codexSessions, geminiSessions } from './sessions.ts'
import type { PartialSums, UsageSums } from './sums.ts'
import type { ScanResult, SumsHook } from './transcript-cache.ts'

/** A coder session, and its main transcript when the search that found it saw it. */
export interface CoderSession {
  id: string
  path: string | null
}

/** A transcript to read for a session, or the source saying why there is none. */
export type Planned = { session: string; path: string; location?: 'start'; why?: string } | Source

export interface CoderReader {
  /** The CLI's sessions written in `repo` (or below it) since `since`, newest first. */
  sessions: (repo: string, env: NodeJS.ProcessEnv, options: { since?: number }) => CoderSession[]
  /** Each session's files to read, in order, or a missing source. */
  plan: (run: RunState, sessions: CoderSession[], env: NodeJS.ProcessEnv) => Planned[]
  scan: (path: string, cache: string | null, env: NodeJS.ProcessEnv, hook?: SumsHook) => ScanResult
  /** One file's sums, going on from what its cache kept. */
  sumFile: (
    scan: ScanResult,
    prices: PriceBook,
    bounds: number[],
    key: string,
    saved: PartialSums | null,
  ) => { sums: UsageSums; keep: PartialSums }
  /** Several files summed together (de-duplicated where the CLI writes a response twice). */
  sumAll: (scans: ScanResult[], prices: PriceBook, sums: UsageSums) => void
}

const claude: CoderReader = {
  sessions: claudeSessions,
  // each session's main transcript and its subagents' transcripts, in that order
  plan: (run, sessions, env) =>
    sessions.flatMap(({ id, path }): Planned[] => {
      const files = path
        ? { main: path, subagents: subagentFiles(path), looked_in: '' }
        : claudeSessionFiles(id, { repo: run.repo, env })
      if (!files.main) {
        const why = `no transcript ${id}.jsonl under ${files.looked_in}`
        return [{ role: 'coder', kind: 'claude', session: id, path: null, status: 'missing', why }]
      }
      return [files.main, ...files.subagents].map((path) => ({ session: id, path }))
    }),
  scan: (path, cache, _env, hook) => scanClaude(path, cache, hook),
  sumFile: sumClaudeFile,
  sumAll: sumClaude,
}

const codex: CoderReader = {
  sessions: codexSessions,
  plan: (_run, sessions, env) =>
    sessions.map(({ id, path: found }): Planned => {
      const path = found ?? codexRolloutForThread(id, env)
      if (path) return { session: id, path }
      const why = `no rollout-*-${id}.jsonl under ${env.CODEX_HOME || '~/.codex'}/sessions or archived_sessions`
      return { role: 'coder', kind: 'codex', session: id, path: null, status: 'missing', why }
    }),
  scan: (path, cache, env, hook) => scanCodex(path, cache, env, hook),
  sumFile: sumCodexFile,
  sumAll: (scans, prices, sums) => {
    for (const scan of scans) sumCodex(scan, prices, sums)
  },
}

const gemini: CoderReader = {
  sessions: geminiSessions,
  // each session's files in the order of their names (session-<time>-…: a resume's newer file last, so its copy of a
  // message is the one kept), then its subagents' files
  plan: (_run, sessions, env) =>
    sessions.flatMap(({ id }): Planned[] => {
      const { files, subagents } = geminiSessionFiles(id, env)
      const byName = files.sort((a, b) => basename(a).localeCompare(basename(b)))
      if (byName.length) return [...byName, ...subagents].map((path) => ({ session: id, path }))
      const why = `no session-*-${id.slice(0, 8)}.jsonl whose first record names ${id} under ${geminiDir(env)}/tmp/*/chats`
      return [{ role: 'coder', kind: 'gemini', session: id, path: null, status: 'missing', why }]
    }),
  scan: (path, cache, _env, hook) => scanGemini(path, cache, hook),
  sumFile: sumGeminiFile,
  sumAll: sumGemini,
}

export const CODER_READERS: Readonly<Record<Vendor, CoderReader | null>> = { claude, codex, gemini }
