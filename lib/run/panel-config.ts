// A panel's config keys (DESIGN "Panel"): `pair_loop.reviewers`, the person's list, and `pair_loop.approval`, its rule.
import * as v from 'valibot'
import { VENDORS } from './vendors.ts'

/** A panel: two or more vendors, each once. */
export const PanelList = v.pipe(
  v.array(v.picklist(VENDORS)),
  v.minLength(2),
  v.check((list) => new Set(list).size === list.length, 'each vendor once'),
)
/** `all`, `any` or `quorum:N` (N ≥ 1). */
export const Approval = v.pipe(v.string(), v.regex(/^(all|any|quorum:[1-9]\d*)$/))
