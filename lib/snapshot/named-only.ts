// The paths a review named only (a binary, a file over 16 MiB, not a regular file), kept by the tree reviewed: the PR
// body of an approved tree names them NOT REVIEWED, as the reviewer was shown them, whatever the working tree is now.
import { readFileSync } from 'node:fs'
import * as v from 'valibot'
import { writeFileAtomic } from '../ground/fsutil.ts'

const NamedOnlySchema = v.object({
  path: v.string(),
  why: v.string(),
  /** The blob (or commit) id: the change's, the base's for a deletion. */
  oid: v.nullable(v.string()),
  /** Its size in bytes (null: not a blob, or not known). */
  size: v.nullable(v.number()),
})

/** A changed path named only, never shown: its id and size are the change's (the base's for a deletion). */
export type NamedOnly = v.InferOutput<typeof NamedOnlySchema>

export function writeNamedOnly(file: string, named: NamedOnly[]): void {
  writeFileAtomic(file, JSON.stringify(named), 0o644, { durable: false })
}

/** The list kept at `file`; null when there is none (or it is not one). */
export function readNamedOnly(file: string): NamedOnly[] | null {
  try {
    const parsed = v.safeParse(v.array(NamedOnlySchema), JSON.parse(readFileSync(file, 'utf8')))
    return parsed.success ? parsed.output : null
  } catch {
    return null
  }
}

/** Why a path the person's `pair_loop.review_exclude` matches is named only: said in the prompt and the PR body. */
export const EXCLUDED_BY_CONFIG = 'excluded by config, not reviewed'
