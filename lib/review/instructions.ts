// The files a reviewer CLI would load from a repository as instructions, settings or hooks. The reviewer runs
// without them (reviewers.ts); it gets the base commit's instruction files as context, and is told which of these
// files the change touches. git reads bytes only here (safeGit, hash-object --no-filters), writing no objects.
import { lstatSync, readlinkSync } from 'node:fs'
import { basename, join } from 'node:path'
import { safeGit, TREE_WALK_TIMEOUT_MS } from '../git.ts'

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

/** Instruction text the CLIs read from a repository: Claude Code's memory files and rules, Codex's project docs. */
const DOC_NAMES = new Set(['CLAUDE.md', 'CLAUDE.local.md', 'AGENTS.md', 'AGENTS.override.md'])
export const isInstructionDoc = (path: string) =>
  DOC_NAMES.has(basename(path)) || /(^|\/)\.claude\/rules\/.+\.md$/.test(path)

/** Anything a reviewer CLI loads from a repository: the docs above, .claude/ (settings, hooks, agents, commands,
 * skills), .codex/ (config, hooks), .agents/ (skills), .mcp.json (MCP servers). */
export const isReviewerConfig = (path: string) =>
  isInstructionDoc(path) || /(^|\/)\.(claude|codex|agents)\//.test(path) || /(^|\/)\.mcp\.json$/.test(path)

const PATHSPECS = [
  ...[...DOC_NAMES].map((name) => `:(top,glob)**/${name}`),
  ':(top,glob)**/.claude/**',
  ':(top,glob)**/.codex/**',
  ':(top,glob)**/.agents/**',
  ':(top,glob)**/.mcp.json',
]

export const PER_FILE_BYTES = 16 * 1024
export const TOTAL_BYTES = 48 * 1024
const MAX_FILES = 24

interface BaseEntry {
  mode: string
  type: string
  oid: string
}

export async function reviewerInstructions(repo: string, base: string): Promise<ReviewerInstructions> {
  const git = (args: string[]) => safeGit(repo, args, { timeoutMs: TREE_WALK_TIMEOUT_MS })
  const atBase = new Map<string, BaseEntry>()
  for (const entry of (await git(['ls-tree', '-r', '-z', '--full-tree', base])).split('\0')) {
    const tab = entry.indexOf('\t')
    const path = entry.slice(tab + 1)
    if (tab < 0 || !isReviewerConfig(path)) continue
    const [mode = '', type = '', oid = ''] = entry.slice(0, tab).split(' ')
    atBase.set(path, { mode, type, oid })
  }
  const listed = (await git(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...PATHSPECS]))
    .split('\0')
    .filter((path) => path && isReviewerConfig(path))
  const candidates = [...new Set([...atBase.keys(), ...listed])].sort()

  const touched: string[] = []
  const toHash: string[] = []
  for (const path of candidates) {
    const was = atBase.get(path)
    const now = onDisk(join(repo, path))
    const wasLink = was?.type === 'blob' && was.mode === '120000'
    if (now === 'missing') {
      if (was) touched.push(path) // deleted
    } else if (now === 'file') {
      if (was?.type === 'blob' && !wasLink) toHash.push(path)
      else touched.push(path) // added, or no longer a link
    } else if (now === 'other') {
      if (was && was.type !== 'commit') touched.push(path) // a submodule is the diff's business
    } else if (!wasLink || (await git(['cat-file', 'blob', was.oid])) !== now.link) touched.push(path)
  }
  if (toHash.length) {
    const oids = (await git(['hash-object', '--no-filters', '--', ...toHash])).trim().split('\n')
    toHash.forEach((path, i) => {
      if (oids[i] !== atBase.get(path)!.oid) touched.push(path)
    })
  }

  const docs = [...atBase.entries()]
    .filter(([path, entry]) => isInstructionDoc(path) && entry.type === 'blob' && entry.mode !== '120000')
    .sort(([a], [b]) => a.split('/').length - b.split('/').length || a.localeCompare(b))
  const kept: InstructionFile[] = []
  const omitted: string[] = []
  let total = 0
  for (const [path, entry] of docs) {
    if (kept.length >= MAX_FILES || total >= TOTAL_BYTES) {
      omitted.push(path)
      continue
    }
    const bytes = Buffer.from(await git(['cat-file', 'blob', entry.oid]))
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

/** What is at a path in the working tree: a regular file, a symlink (its target), missing, or something else. */
function onDisk(path: string): 'file' | 'missing' | 'other' | { link: string } {
  try {
    const stat = lstatSync(path)
    if (stat.isFile()) return 'file'
    if (stat.isSymbolicLink()) return { link: readlinkSync(path) }
    return 'other'
  } catch {
    return 'missing'
  }
}
