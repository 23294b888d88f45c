// Which recorded reviewer a repository accepts (the Action's `require_reviewers`): by default a real vendor's CLI that
// is not the coder's own vendor. Pure.
import { VENDORS, isVendor } from '../run/vendors.ts'
import { fail } from '../ground/errors.ts'
import type { RecordReviewer } from './record.ts'

/** `vendor` (claude or codex), one vendor by name, or — only when named — a custom command or a built-in stub. */
export const POLICY_TOKENS = ['vendor', ...VENDORS, 'custom', 'builtin'] as const
export type PolicyToken = (typeof POLICY_TOKENS)[number]

export interface ReviewerPolicy {
  accept: PolicyToken[]
  allowSameVendor: boolean
}

/** `require_reviewers` as written in the workflow (comma or space separated); empty: `vendor`. */
export function parsePolicy(requireReviewers: string | undefined, allowSameVendor: string | undefined): ReviewerPolicy {
  const tokens = (requireReviewers ?? '').split(/[\s,]+/).filter(Boolean)
  for (const token of tokens)
    if (!(POLICY_TOKENS as readonly string[]).includes(token))
      fail('usage', `require_reviewers: unknown reviewer ${JSON.stringify(token)}; use ${POLICY_TOKENS.join(', ')}`, {
        input: 'require_reviewers',
        accepted: [...POLICY_TOKENS],
      })
  return { accept: tokens.length ? (tokens as PolicyToken[]) : ['vendor'], allowSameVendor: isTrue(allowSameVendor) }
}

const isTrue = (value: string | undefined) => /^(true|1|yes)$/i.test(value?.trim() ?? '')

/** Null when the policy accepts the reviewer; else why not, in a person's words. */
export function refusal(reviewer: RecordReviewer, coder: string, policy: ReviewerPolicy): string | null {
  const named = policy.accept.some((token) =>
    token === 'vendor' || isVendor(token)
      ? reviewer.kind === 'vendor' && (token === 'vendor' || reviewer.tool === token)
      : reviewer.kind === token,
  )
  const who = `${reviewer.kind === 'vendor' ? reviewer.tool : reviewer.kind}${reviewer.program ? ` (${reviewer.program})` : ''}`
  if (!named) return `the approving reviewer is ${who}, not one require_reviewers accepts (${policy.accept.join(', ')})`
  if (reviewer.kind === 'vendor' && reviewer.tool === coder && !policy.allowSameVendor)
    return `the approving reviewer ${who} is the coder's own vendor; set allow_same_vendor: true to accept it`
  return null
}
