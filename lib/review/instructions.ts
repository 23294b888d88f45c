// The files a reviewer CLI would load from a repository as instructions, settings or hooks. The reviewer runs
// without them (reviewers.ts); it gets the base commit's instruction files as context, and is told which of these
// files the change touches, both read from the change's snapshot (lib/snapshot/).
import { basename } from 'node:path'
import type { RepoSnapshot } from '../snapshot/snapshot.ts'
import { objectSizes, readVerified } from '../snapshot/verified.ts'

export interface InstructionFile {
  path: string
  text: string
  /** Bytes at base; the text is cut when it was longer than the per-file bound. */
  bytes: number
  truncated: boolean
}

export interface ReviewerInstructions {
  /** The base commit's instruction files (CLAUDE.md, AGENTS.md, …), root first, bounded in size. */
  base: InstructionFile[]
  /** Instruction files at base left out to keep the prompt bounded. */
  omitted: string[]
  /** Paths the change adds, edits or deletes that a reviewer CLI would load from a repository. */
  touched: string[]
}

/** Instruction text the CLIs read from a repository: Claude Code's memory files and rules, Codex's project docs,
 * Gemini CLI's context files. */
const DOC_NAMES = new Set(['CLAUDE.md', 'CLAUDE.local.md', 'AGENTS.md', 'AGENTS.override.md', 'GEMINI.md'])
export const isInstructionDoc = (path: string) =>
  path.endsWith('.md') && (DOC_NAMES.has(basename(path)) || /(^|\/)\.claude\/rules\/.+\.md$/.test(path))

/** Anything a reviewer CLI loads from a repository: the docs above, .claude/ (settings, hooks, agents, commands,
 * skills), .codex/ (config, hooks), .gemini/ (settings, commands, policies), .agents/ (skills), .mcp.json (MCP
 * servers). */
export const isReviewerConfig = (path: string) =>
  isInstructionDoc(path) || /(^|\/)\.(claude|codex|gemini|agents)\//.test(path) || /(^|\/)\.mcp\.json$/.test(path)

export const PER_FILE_BYTES = 16 * 1024
export const TOTAL_BYTES = 48 * 1024
const MAX_FILES = 24

/**
 * The base's instruction files (read from the repository's objects, each verified against its id) and the reviewer-
 * loaded files the snapshot changes: both from the snapshot itself, so what the prompt calls "at base" is the base
 * the diff was taken against, byte for byte.
 */
export async function reviewerInstructions(snap: RepoSnapshot): Promise<ReviewerInstructions> {
  const base = await snap.base()
  const touched = snap.changes.map((change) => change.path).filter(isReviewerConfig)
  const docs = [...base.entries()]
    .filter(([path, leaf]) => isInstructionDoc(path) && /^100/.test(leaf.mode))
    .sort(([a], [b]) => a.split('/').length - b.split('/').length || a.localeCompare(b))
  const kept: InstructionFile[] = []
  const omitted: string[] = []
  const wanted = docs.slice(0, MAX_FILES)
  const sizes = await objectSizes(
    snap.git,
    wanted.map(([, leaf]) => leaf.oid),
  )
  const small = wanted.filter(([, leaf]) => (sizes.get(leaf.oid) ?? Number.POSITIVE_INFINITY) <= 1024 * 1024)
  const blobs = await readVerified(
    snap.git,
    small.map(([, leaf]) => leaf.oid),
    'an instruction file at base',
  )
  let total = 0
  for (const [path, leaf] of docs) {
    const bytes = blobs.get(leaf.oid)?.content
    if (!bytes || kept.length >= MAX_FILES || total >= TOTAL_BYTES) {
      omitted.push(path)
      continue
    }
    const room = Math.min(PER_FILE_BYTES, TOTAL_BYTES - total)
    const text = bytes
      .subarray(0, room)
      .toString('utf8')
      .replace(/\uFFFD$/, '')
    total += Math.min(bytes.length, room)
    kept.push({ path, text, bytes: bytes.length, truncated: bytes.length > room })
  }
  return { base: kept, omitted, touched: touched.sort() }
}
