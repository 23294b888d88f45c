// The working tree against the base commit, as the reviewer reads it: stat, diff, and the cap on its size.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execOrFail } from '../exec.ts'
import { HANDOFF_NAME, HANDOFF_TEMP_GLOB } from '../git.ts'

export interface WorkingDiff {
  stat: string
  diff: string
  bytes: number
  truncated: boolean
}

const EXCLUDE_HANDOFF = `:(top,exclude)${HANDOFF_NAME}`
const EXCLUDE_HANDOFF_TEMPS = `:(top,exclude)${HANDOFF_TEMP_GLOB}`

/**
 * The working tree (untracked files included) against the base commit, through a temporary index,
 * so the user's own index is never touched. Binary files appear by name only (git's default).
 */
export async function workingDiff(repo: string, base: string, maxBytes: number): Promise<WorkingDiff> {
  const dir = mkdtempSync(join(tmpdir(), 'pair-loop-index-'))
  const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') }
  // core.quotePath off: the reviewer reads `src/файл.ts`, not `"src/\321\204\320\260\320\271\320\273.ts"`
  const git = (args: string[]) =>
    execOrFail('git', ['-c', 'core.quotePath=false', ...args], {
      cwd: repo,
      env,
      code: 'git_error',
      timeoutMs: 120_000,
    })
  try {
    await git(['read-tree', base])
    await git(['add', '-A', '--', '.']) // HANDOFF.md is git-excluded; the diff below leaves it out in any case
    const common = [
      'diff',
      '--cached',
      '--no-color',
      '--no-ext-diff',
      '--find-renames',
      base,
      '--',
      '.',
      EXCLUDE_HANDOFF,
      EXCLUDE_HANDOFF_TEMPS,
    ]
    const stat = (await git([...common.slice(0, 5), '--stat=200', ...common.slice(5)])).trimEnd()
    const full = await git(common)
    const bytes = Buffer.byteLength(full)
    if (bytes <= maxBytes) return { stat, diff: full, bytes, truncated: false }
    return { stat, diff: cutAtLine(full, maxBytes), bytes, truncated: true }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** At most `maxBytes` of UTF-8, ending at a whole line. */
export function cutAtLine(text: string, maxBytes: number): string {
  const head = Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '')
  const lastNewline = head.lastIndexOf('\n')
  return lastNewline > 0 ? head.slice(0, lastNewline + 1) : head
}
