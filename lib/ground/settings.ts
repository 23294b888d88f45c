// The PAIR_LOOP_* settings (most for tests: shorter waits, smaller caps), read one way: from the Context's environment,
// parsed once per command. A value that is not one (unset, empty, not a number, out of range) is the default.
import * as v from 'valibot'
import { type Context, context } from './context.ts'

const numberSetting = (fallback: number, accepts: (n: number) => boolean) =>
  v.fallback(v.pipe(v.string(), v.trim(), v.nonEmpty(), v.transform(Number), v.check(accepts)), fallback)
const positive = (n: number) => Number.isFinite(n) && n > 0
const positiveInteger = (n: number) => Number.isSafeInteger(n) && n > 0

const SettingsSchema = v.pipe(
  v.object({
    /** The gh program (a path, or a name on PATH). */
    PAIR_LOOP_GH: v.fallback(v.pipe(v.string(), v.nonEmpty()), 'gh'),
    /** Items per page of the PR queries (GitHub's largest, as the pr-babysit contract's `--page-size`). */
    PAIR_LOOP_GH_PAGE_SIZE: numberSetting(100, positiveInteger),
    /** The first wait before a gh call is tried again (the next one twice that). */
    PAIR_LOOP_GH_RETRY_MS: numberSetting(2_000, positive),
    /** The time limit of one gh call. */
    PAIR_LOOP_GH_TIMEOUT_S: numberSetting(60, positive),
    /** How often a review in flight notes that it is alive. */
    PAIR_LOOP_HEARTBEAT_S: numberSetting(15, positive),
    /** How long a command waits for a run's lock before `locked`. */
    PAIR_LOOP_LOCK_WAIT_MS: numberSetting(15_000, positive),
    /** The wait between pr-resolve's checks that a thread is resolved (0: none). */
    PAIR_LOOP_RESOLVE_WAIT_MS: numberSetting(1_000, (n) => Number.isFinite(n) && n >= 0),
    /** The cap on a reviewer's stdout. */
    PAIR_LOOP_REVIEWER_MAX_OUTPUT_BYTES: numberSetting(64 * 1024 * 1024, positiveInteger),
    /** Silence allowed before the watchdog ends a reviewer call. */
    PAIR_LOOP_REVIEWER_SILENCE_S: numberSetting(300, positive),
  }),
  v.transform((env) => ({
    gh: env.PAIR_LOOP_GH,
    ghPageSize: env.PAIR_LOOP_GH_PAGE_SIZE,
    ghRetryMs: env.PAIR_LOOP_GH_RETRY_MS,
    ghTimeoutMs: env.PAIR_LOOP_GH_TIMEOUT_S * 1000,
    heartbeatMs: env.PAIR_LOOP_HEARTBEAT_S * 1000,
    lockWaitMs: env.PAIR_LOOP_LOCK_WAIT_MS,
    resolveWaitMs: env.PAIR_LOOP_RESOLVE_WAIT_MS,
    reviewerMaxOutputBytes: env.PAIR_LOOP_REVIEWER_MAX_OUTPUT_BYTES,
    reviewerSilenceMs: env.PAIR_LOOP_REVIEWER_SILENCE_S * 1000,
  })),
)
export type Settings = v.InferOutput<typeof SettingsSchema>

/** The settings an environment gives (never fails). */
export const settingsOf = (env: Readonly<NodeJS.ProcessEnv>): Settings => v.parse(SettingsSchema, env)

const parsed = new WeakMap<Context, Settings>()

/** The settings of the command running now (its Context's environment), parsed on first use. */
export function settings(ctx: Context = context()): Settings {
  let known = parsed.get(ctx)
  if (!known) {
    known = settingsOf(ctx.env)
    parsed.set(ctx, known)
  }
  return known
}
