// The value shapes the config's keys share: counts, waits, prices, variable names, absolute paths, globs.
import * as v from 'valibot'
import { globProblem } from '../ground/glob.ts'

export const PositiveInt = v.pipe(v.number(), v.integer(), v.minValue(1))
/** A bounded wait in seconds: below a coder shell's own limits is the point (Claude Code's Bash tool: 120 s). */
export const WaitSeconds = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400))
export const Price = v.pipe(v.number(), v.minValue(0))
export const EnvName = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'))
export const AbsolutePath = v.pipe(v.string(), v.regex(/^\//, 'an absolute path'))
/** A glob of the dialect in lib/ground/glob.ts. */
export const Glob = v.pipe(
  v.string(),
  v.check((pattern) => globProblem(pattern) === null, 'a glob'),
)
