// The GitHub Action's one program (action.yml runs dist/action.cjs): `mode: verify` (default) or `mode: review`, its
// inputs as GitHub passes them (INPUT_*), every gh call on the event's repository (GH_REPO), never the checkout's.
import { actionInput, pullRequestEvent } from '../ground/actions-env.ts'
import { type Context, withContext } from '../ground/context.ts'
import { fail } from '../ground/errors.ts'

export const ACTION_MODES = ['verify', 'review'] as const

export async function run(ctx: Context, options: { mode?: string }) {
  const mode = options.mode ?? actionInput(ctx.env, 'mode') ?? 'verify'
  if (!(ACTION_MODES as readonly string[]).includes(mode))
    fail('usage', `mode: ${JSON.stringify(mode)} is not one of ${ACTION_MODES.join(', ')}`, { input: 'mode' })
  const { repository } = pullRequestEvent(ctx.env)
  const pinned: Context = { ...ctx, env: { ...ctx.env, GH_REPO: repository } }
  return withContext(pinned, async () =>
    mode === 'verify'
      ? (await import('./action-verify.ts')).runVerify(pinned)
      : (await import('./action-review.ts')).runReview(pinned),
  )
}
