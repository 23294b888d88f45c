// The change as bytes: every entry of the working tree that differs from the base, each regular file hashed as it is
// on disk (never as git's attributes convert it), and the fingerprint of them all. The fingerprint is what the
// reviewer saw: `finish --verdict APPROVED` refuses a tree that moved on since the approving review, and the Stop hook
// tells the coder a round it has not handed over.
import { lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { hexDigest } from '../digest.ts'
import { nulRecords } from '../exec.ts'
import { gitTry, HANDOFF_NAME, HANDOFF_TEMP_GLOB, safeGitStream, TREE_WALK_TIMEOUT_MS } from '../git.ts'
import { lastReview } from '../run-queries.ts'
import type { RunState } from '../state.ts'
import { withTempIndex } from './temp-index.ts'

/** HANDOFF.md and its temp files: pair-loop's own, never part of the change. */
export const excludeOwn = () => [`:(top,exclude)${HANDOFF_NAME}`, `:(top,exclude)${HANDOFF_TEMP_GLOB}`]

export interface Change {
  /** From the repository's top. */
  path: string
  /** git's raw status letter (A, C, D, M, T, U). */
  status: string
  baseMode: string
  baseOid: string
  mode: string
  /** What is on disk: a regular file's raw blob id, a link's target, a size and time for a file too big to hash. */
  bytes: string | null
  /** A regular file small enough to diff, whose blob id `bytes` is. */
  hashed: boolean
}

/** Stat data alone lists a file: git has hashed nothing yet (a worktree side's id is zeros). */
const RAW = /^:(\d{6}) (\d{6}) ([0-9a-f]+) [0-9a-f]+ ([A-Z])/

/** Files up to this size are hashed by content; bigger ones by size and modification time (a review never waits on a 1 GiB file). */
const HASHED_UP_TO = 16 * 1024 * 1024

/** The entries of the working tree (through a temporary index, `env`) that differ from `base`, their bytes hashed. */
export async function changesOnDisk(
  repo: string,
  base: string,
  env: NodeJS.ProcessEnv,
  exclude: string[],
): Promise<Change[]> {
  const changes: Change[] = []
  let meta: RegExpExecArray | null | undefined
  const records = nulRecords((record) => {
    if (meta === undefined) meta = RAW.exec(record)
    else {
      if (meta) changes.push(describe(repo, record, meta))
      meta = undefined
    }
  })
  const args = ['diff-index', '--raw', '-z', '--no-renames', '--ignore-submodules=dirty', base, '--', '.', ...exclude]
  await safeGitStream(repo, args, records.onData, { env, timeoutMs: TREE_WALK_TIMEOUT_MS })
  records.end()
  const hashed = changes.filter((change) => change.hashed)
  const ids = await blobIds(repo, env, hashed)
  hashed.forEach((change, i) => {
    change.bytes = ids[i]!
  })
  // a file only touched (its stat changed, its bytes did not) is no change
  return changes.filter((change) => !(change.bytes === change.baseOid && change.mode === change.baseMode))
}

function describe(repo: string, path: string, meta: RegExpExecArray): Change {
  const [, baseMode, mode, baseOid, status] = meta as unknown as [string, string, string, string, string]
  const change = { path, status, baseMode, baseOid, mode, bytes: null as string | null, hashed: false }
  if (status === 'D') return change
  try {
    const stats = lstatSync(join(repo, path))
    if (stats.isSymbolicLink()) change.bytes = `link:${readlinkSync(join(repo, path))}`
    else if (!stats.isFile()) change.bytes = `${mode}:${stats.ino}:${stats.mtimeMs}`
    else if (stats.size > HASHED_UP_TO) change.bytes = `big:${stats.size}:${stats.mtimeMs}`
    else change.hashed = true
  } catch {
    change.bytes = 'gone'
  }
  return change
}

/**
 * Each file's blob id, written nowhere: as its bytes are (`--no-filters`: no attribute applies), or as git compares
 * it (`asDiffed`: ident, text/eol, working-tree-encoding applied); `unread` where git failed.
 */
async function blobIds(repo: string, env: NodeJS.ProcessEnv, files: Change[], asDiffed = false): Promise<string[]> {
  const filters = asDiffed ? [] : ['--no-filters']
  // --stdin-paths reads a path a line: one with a newline in it goes on the command line, alone
  const lineSafe = files.filter((file) => !file.path.includes('\n'))
  const alone = files.filter((file) => file.path.includes('\n'))
  const input = `${lineSafe.map((file) => file.path).join('\n')}\n`
  const [batch, ...single] = await Promise.all([
    lineSafe.length === 0 ? null : gitTry(repo, ['hash-object', ...filters, '--stdin-paths'], { env, input }),
    ...alone.map((file) => gitTry(repo, ['hash-object', ...filters, '--', file.path], { env })),
  ])
  const batchIds = batch?.ok ? batch.stdout.split('\n') : []
  const ids = new Map<Change, string>([
    ...lineSafe.map((file, i) => [file, batchIds[i] || 'unread'] as const),
    ...alone.map((file, i) => [file, (single[i]?.ok && single[i].stdout.trim()) || 'unread'] as const),
  ])
  return files.map((file) => ids.get(file)!)
}

/** Files whose bytes differ from what git diffs: their blob ids as git compares them against their raw ones. */
export async function convertedFiles(repo: string, env: NodeJS.ProcessEnv, changes: Change[]): Promise<string[]> {
  const hashed = changes.filter((change) => change.hashed)
  const asDiffed = await blobIds(repo, env, hashed, true)
  return hashed.filter((change, i) => asDiffed[i] !== change.bytes).map((change) => change.path)
}

/** One id for the change as a whole: equal exactly when every changed entry is the same, byte for byte. */
export function fingerprintOf(changes: Change[]): string {
  const lines = changes.map((c) => `${c.status} ${c.mode} ${c.bytes ?? '-'} ${c.path}`)
  return hexDigest(lines.join('\0'))
}

/** The fingerprint of the working tree's change against `base` (what a review of it now would see). */
export async function changeFingerprint(repo: string, base: string): Promise<string> {
  const { value } = await withTempIndex(repo, true, (env) => changesOnDisk(repo, base, env, excludeOwn()))
  return fingerprintOf(value)
}

/** The fingerprint now of an approved run whose approving review recorded one (else null: nothing to compare). */
export async function fingerprintAfterApproval(run: RunState): Promise<string | null> {
  if (run.phase !== 'approved' || !lastReview(run)?.fingerprint) return null
  return changeFingerprint(run.repo, run.base_sha)
}
