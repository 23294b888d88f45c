// The change as bytes: every entry of the working tree that differs from the base, each regular file hashed as it is
// on disk (never as git's attributes convert it), and the fingerprint of them all. The fingerprint is what the
// reviewer saw: `finish --verdict APPROVED` refuses a tree that moved on since the approving review, and the Stop hook
// tells the coder a round it has not handed over.
import { lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { hexDigest } from '../digest.ts'
import { nulRecords } from '../exec.ts'
import { gitTry, HANDOFF_NAME, HANDOFF_TEMP_GLOB, safeGitStream } from '../git.ts'
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
  await safeGitStream(repo, args, records.onData, { env, timeoutMs: 120_000 })
  records.end()
  await hashAsOnDisk(
    repo,
    env,
    changes.filter((change) => change.hashed),
  )
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

/** Each file's blob id as its bytes are (`--no-filters`: no attribute applies), written nowhere; `unread` if git failed. */
async function hashAsOnDisk(repo: string, env: NodeJS.ProcessEnv, files: Change[]): Promise<void> {
  const lineSafe = files.filter((file) => !file.path.includes('\n'))
  // --stdin-paths reads a path a line: one with a newline in it goes on the command line, alone
  const alone = files.filter((file) => file.path.includes('\n'))
  const [batch, ...single] = await Promise.all([
    lineSafe.length === 0
      ? null
      : gitTry(repo, ['hash-object', '--no-filters', '--stdin-paths'], { env, input: stdinPaths(lineSafe) }),
    ...alone.map((file) => gitTry(repo, ['hash-object', '--no-filters', '--', file.path], { env })),
  ])
  const ids = batch?.ok ? batch.stdout.split('\n') : []
  lineSafe.forEach((file, i) => {
    file.bytes = ids[i] || 'unread'
  })
  alone.forEach((file, i) => {
    file.bytes = single[i]?.ok ? single[i].stdout.trim() : 'unread'
  })
}

const stdinPaths = (changes: Change[]) => `${changes.map((change) => change.path).join('\n')}\n`

/**
 * Files whose bytes differ from what git diffs: their blob ids as git's attributes convert them (ident, text/eol,
 * working-tree-encoding) against their raw ones. A file git could not hash counts as converted, to be shown.
 */
export async function convertedFiles(repo: string, env: NodeJS.ProcessEnv, changes: Change[]): Promise<string[]> {
  const hashed = changes.filter((change) => change.hashed)
  const lineSafe = hashed.filter((change) => !change.path.includes('\n'))
  const alone = hashed.filter((change) => change.path.includes('\n')) // not hashed both ways: shown, to be safe
  if (lineSafe.length === 0) return alone.map((change) => change.path)
  const asDiffed = await gitTry(repo, ['hash-object', '--stdin-paths'], { env, input: stdinPaths(lineSafe) })
  const ids = asDiffed.ok ? asDiffed.stdout.split('\n') : []
  return [...lineSafe.filter((change, i) => ids[i] !== change.bytes), ...alone].map((change) => change.path)
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

/** An approved run whose working tree is no longer the change its approving review saw (none recorded: not known). */
export async function changedSinceApproval(run: RunState): Promise<boolean> {
  const seen = run.rounds.at(-1)?.reviewer?.fingerprint
  if (run.phase !== 'approved' || !seen) return false
  return (await changeFingerprint(run.repo, run.base_sha)) !== seen
}
