// Home config and the repository's .pair-loop.json (wins), under one strict schema: a typo is an error.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { fail } from './errors.ts'
import { configPath } from './paths.ts'
import { AGENTS } from './state.ts'
import { parseJson, validate } from './validate.ts'

const PositiveInt = v.pipe(v.number(), v.integer(), v.minValue(1))
const Price = v.pipe(v.number(), v.minValue(0))

export const ModelPrice = v.strictObject({
  input: Price,
  output: Price,
  cache_write_5m: v.optional(Price),
  cache_write_1h: v.optional(Price),
  cache_read: v.optional(Price),
  cached_input: v.optional(Price),
})

const PairLoopSection = v.strictObject({
  coder: v.optional(v.picklist(AGENTS)),
  reviewer: v.optional(v.picklist(AGENTS)),
  max_rounds: v.optional(PositiveInt),
  reviewer_timeout_s: v.optional(PositiveInt),
  max_diff_bytes: v.optional(PositiveInt),
  reviewer_cmd: v.optional(v.nullable(v.pipe(v.array(v.string()), v.minLength(1)))),
  reviewer_model: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1)))),
  claude_bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  codex_bin: v.optional(v.pipe(v.string(), v.minLength(1))),
})

const BudgetSection = v.strictObject({
  per_run_usd: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0)))),
  warn_ratio: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
})

export const ConfigFile = v.strictObject({
  pair_loop: v.optional(PairLoopSection),
  budget: v.optional(BudgetSection),
  pricing: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), ModelPrice)),
})

export type ConfigFile = v.InferOutput<typeof ConfigFile>
export type ModelPrice = v.InferOutput<typeof ModelPrice>

export const DEFAULTS = {
  pair_loop: {
    coder: 'claude' as (typeof AGENTS)[number],
    reviewer: 'codex' as (typeof AGENTS)[number],
    max_rounds: 3,
    reviewer_timeout_s: 900,
    max_diff_bytes: 200_000,
    reviewer_cmd: null as string[] | null,
    reviewer_model: null as string | null,
    claude_bin: 'claude',
    codex_bin: 'codex',
  },
  budget: { per_run_usd: null as number | null, warn_ratio: 0.8 },
  pricing: {} as Record<string, ModelPrice>,
}

export type Config = typeof DEFAULTS & { sources: string[] }

export const REPO_CONFIG_NAME = '.pair-loop.json'

/** Defaults, then the home file, then the repository's file: each section merged key by key. */
export function loadConfig({ repo, home }: { repo?: string; home?: string } = {}): Config {
  const files = [configPath(home), ...(repo ? [join(repo, REPO_CONFIG_NAME)] : [])]
  const config: Config = structuredClone({ ...DEFAULTS, sources: [] as string[] })
  for (const file of files) {
    const parsed = readConfigFile(file)
    if (!parsed) continue
    config.sources.push(file)
    Object.assign(config.pair_loop, parsed.pair_loop)
    Object.assign(config.budget, parsed.budget)
    Object.assign(config.pricing, parsed.pricing)
  }
  return config
}

export function readConfigFile(file: string): ConfigFile | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    fail('config_invalid', `cannot read ${file}: ${(error as Error).message}`, { path: file })
  }
  return validate(ConfigFile, parseJson(text, 'config_invalid', file), 'config_invalid', file)
}
