// An answer GitHub took without saying which comment it made (no id in its answer): kept by the body's hash, never posted
// again blind. The next tick looks for that hash among the PR's comments: found, it is recorded as the reply it is; not
// found, the post did not land and the item is answerable again. Pure.
import { hexDigest } from '../ground/digest.ts'
import type { PrReplyRecord, PrWatch, Snapshot } from '../run/pr-schema.ts'

/** The hash an answer is found again by (GitHub trims a comment's ends). */
export const bodyHash = (body: string) => hexDigest(body.replace(/\r\n/g, '\n').trim())

export function confirmUnconfirmed(snapshot: Snapshot, unconfirmed: NonNullable<PrWatch['unconfirmed']>) {
  const posted = [
    ...snapshot.comments.map((c) => ({ id: c.id, url: c.url ?? null, body: c.body })),
    ...snapshot.threads.flatMap((t) =>
      t.comments.map((c) => ({ id: c.database_id, url: c.url ?? null, body: c.body })),
    ),
  ]
  const replied: Record<string, PrReplyRecord> = {}
  const notFound: string[] = []
  for (const [key, entry] of Object.entries(unconfirmed)) {
    const found = posted.find((c) => bodyHash(c.body) === entry.body_sha256)
    if (!found) {
      notFound.push(key)
      continue
    }
    replied[key] = {
      kind: entry.kind,
      comment_id: found.id,
      url: found.url ?? '',
      at: entry.at,
      head: entry.head,
      to_bot: entry.to_bot,
      finding_keys: entry.finding_keys,
    }
  }
  return { replied, confirmed: Object.keys(replied), not_found: notFound }
}
