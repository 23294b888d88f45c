// Home config and the repository's .pair-loop.json (wins, within the Trust rules), under one strict schema: a typo is
// an error. The effective config is frozen on the run at `start` (see lib/run/state.ts), so a file changed mid-run moves nothing.
import { AbsolutePath, EnvName, Glob, PositiveInt, Price, WaitSeconds } from './config-values.ts'
import { join } from 'node:path'
import * as v from 'valibot'
import { Approval, PanelList } from './panel-config.ts'
import { fail, isPairLoopError } from '../ground/errors.ts'
import { ioFailure, readRegularFile } from '../ground/fsutil.ts'
import { configPath } from '../ground/paths.ts'
import { trustedSha } from './trust.ts'
import { VENDORS } from './vendors.ts'
import { DEFAULT_BLOCK_ON, loosens, SEVERITIES } from './severity-gate.ts'
import { hexDigest } from '../ground/digest.ts'
import { gitObjectId } from '../ground/git-object-id.ts'
import {
  type ConfigProblem,
  configProblems,
  notAnObject,
  notJson,
  notRegular,
  keyEffect,
  trustEffect,
  untrustedConfig,
} from './config-issues.ts'

export const ModelPrice = v.strictObject({
  input: Price,
  output: Price,
  cache_write_5m: v.optional(Price),
  cache_write_1h: v.optional(Price),
  cache_read: v.optional(Price),
  cached_input: v.optional(Price),
})

/**
 * What makes a `github-actions[bot]` comment a review (every workflow posts as that one account): the workflow file it
 * links its Actions run to (`.github/workflows/x.yml`), a marker its body carries, or both (then both must hold).
 */
export const ActionReview = v.pipe(
  v.strictObject({
    workflow: v.optional(v.pipe(v.string(), v.minLength(1))),
    marker: v.optional(v.pipe(v.string(), v.minLength(1))),
  }),
  v.check((entry) => entry.workflow !== undefined || entry.marker !== undefined, 'names a workflow, a marker or both'),
)
export type ActionReview = v.InferOutput<typeof ActionReview>

/** A variable the reviewer gets: the person's value, or `true` for the value of the command that asks (the coder's). */
export const ReviewerEnvValue = v.union([v.string(), v.literal(true)])

/** What only the person decides (lib/review/authority.ts): a repository file sets none of them without trust. */
const AUTHORITY_KEYS = {
  /** `review --reviewer-cmd` and `builtin:*` from the command line. */
  allow_reviewer_cmd: v.optional(v.boolean()),
  /** A reviewer of the coder's own vendor. */
  allow_same_vendor: v.optional(v.boolean()),
  /** Variables the reviewer gets besides the allow-list (lib/review/reviewer-env.ts). */
  reviewer_env: v.optional(v.record(EnvName, ReviewerEnvValue)),
  /** Where the person's Claude Code keeps its config and transcripts (default ~/.claude). */
  claude_config_dir: v.optional(AbsolutePath),
  /** Where the person's Codex keeps its config and transcripts (default ~/.codex). */
  codex_home: v.optional(AbsolutePath),
  /** The home the person's Gemini CLI keeps `.gemini/` in (its GEMINI_CLI_HOME; default ~). */
  gemini_cli_home: v.optional(AbsolutePath),
  /** The vendors a review falls back to, in order, when the reviewer's CLI is missing (default: none). */
  reviewers_fallback: v.optional(v.array(v.picklist(VENDORS))),
  /** A file of the person's rules, added to the reviewer's prompt as theirs (lib/review/rules.ts); null: none. */
  review_instructions: v.optional(v.nullable(AbsolutePath)),
  /** Changed paths the reviewer is not shown, only named as excluded (globs, lib/ground/glob.ts). */
  review_exclude: v.optional(v.array(Glob)),
  /** A panel: these vendors review each round at once (DESIGN "Panel"); `approval` decides the round. */
  reviewers: v.optional(v.nullable(PanelList)),
  /** How a panel's verdicts make the round's: every member (`all`), one (`any`) or N (`quorum:N`) approving. */
  approval: v.optional(Approval),
}

/** What the pair-loop Action's `mode: review` puts in its review: read as a CI reviewer without any config. */
export const PAIR_LOOP_REVIEW_MARKER = '<!-- pair-loop:review -->'

const PairLoopSection = v.strictObject({
  coder: v.optional(v.picklist(VENDORS)),
  reviewer: v.optional(v.picklist(VENDORS)),
  max_rounds: v.optional(PositiveInt),
  reviewer_timeout_s: v.optional(PositiveInt),
  review_wait_s: v.optional(WaitSeconds),
  max_diff_bytes: v.optional(PositiveInt),
  reviewer_cmd: v.optional(v.nullable(v.pipe(v.array(v.string()), v.minLength(1)))),
  reviewer_model: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1)))),
  claude_bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  codex_bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  gemini_bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  pr_bots: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  pr_action_reviews: v.optional(v.array(ActionReview)),
  pr_final_round: v.optional(v.boolean()),
  ...AUTHORITY_KEYS,
  pr_max_rounds: v.optional(PositiveInt),
  stalemate_rounds: v.optional(PositiveInt),
  reviewer_resume_s: v.optional(WaitSeconds),
  block_on: v.optional(v.picklist(SEVERITIES)),
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

/**
 * Review bots whose comments the PR phase reads as a reviewer's (GraphQL logins without `[bot]` match too). Not
 * `github-actions[bot]`: every workflow posts as it, so only `pr_action_reviews` makes one of its comments a review.
 */
export const DEFAULT_PR_BOTS = [
  'coderabbitai[bot]',
  'copilot-pull-request-reviewer[bot]',
  'gemini-code-assist[bot]',
  'sourcery-ai[bot]',
  'greptile-apps[bot]',
  'qodo-merge-pro[bot]',
  'claude[bot]',
  'chatgpt-codex-connector[bot]',
] as const

/** The config a run goes by: every key set (defaults filled in), and the files it came from with their SHA-256. */
export const Config = v.object({
  pair_loop: v.object({
    coder: v.picklist(VENDORS),
    reviewer: v.picklist(VENDORS),
    max_rounds: PositiveInt,
    reviewer_timeout_s: PositiveInt,
    /** How long `review` waits for the detached reviewer before printing the in-flight document (a run frozen before it: 100). */
    review_wait_s: v.optional(WaitSeconds, 100),
    max_diff_bytes: PositiveInt,
    reviewer_cmd: v.nullable(v.array(v.string())),
    reviewer_model: v.nullable(v.string()),
    claude_bin: v.string(),
    codex_bin: v.string(),
    gemini_bin: v.optional(v.string(), 'gemini'),
    /** Review-bot logins of the PR phase (a run frozen before the key existed gets the default). */
    pr_bots: v.optional(v.array(v.string()), () => [...DEFAULT_PR_BOTS]),
    /** Which `github-actions[bot]` comments are reviews (by default the pair-loop Action's, by its marker). */
    pr_action_reviews: v.optional(v.array(ActionReview), () => [{ marker: PAIR_LOOP_REVIEW_MARKER }]),
    /** `review --pr`: one more review of the pushed PR diff, posted as one PR review. */
    pr_final_round: v.optional(v.boolean(), false),
    allow_reviewer_cmd: v.optional(v.boolean(), false),
    allow_same_vendor: v.optional(v.boolean(), false),
    reviewer_env: v.optional(v.record(v.string(), ReviewerEnvValue), () => ({})),
    claude_config_dir: v.optional(v.nullable(v.string()), null),
    codex_home: v.optional(v.nullable(v.string()), null),
    gemini_cli_home: v.optional(v.nullable(v.string()), null),
    /** The vendors a missing reviewer CLI falls back to, in order (a run frozen before the key: the other vendor). */
    reviewers_fallback: v.optional(v.nullable(v.array(v.picklist(VENDORS))), null),
    /** A panel of vendors reviewing each round at once (null: one reviewer, as before panels). */
    reviewers: v.optional(v.nullable(PanelList), null),
    /** The panel's approval rule (a run frozen before it: all). */
    approval: v.optional(Approval, 'all'),
    /** Review rounds after the PR opened (fixes in the PR phase) before asking the person; apart from max_rounds. */
    pr_max_rounds: v.optional(PositiveInt, 3),
    /** Rounds in a row with the same open findings on unchanged files before asking the person (a stalemate). */
    stalemate_rounds: v.optional(PositiveInt, 2),
    /** A round continues the reviewer's session of the last one when that call ended this recently (0: never). */
    reviewer_resume_s: v.optional(WaitSeconds, 300),
    /** The severity gate: findings below it never keep a round from approval (a run frozen before it: nit, all block). */
    block_on: v.optional(v.picklist(SEVERITIES), DEFAULT_BLOCK_ON),
    /** The person's rules file for the reviewer, read when a review runs (null: none). */
    review_instructions: v.optional(v.nullable(v.string()), null),
    /** Globs of changed paths left out of the reviewer's view, named as "excluded by config, not reviewed". */
    review_exclude: v.optional(v.array(v.string()), () => []),
  }),
  budget: v.object({ per_run_usd: v.nullable(v.pipe(v.number(), v.minValue(0))), warn_ratio: v.number() }),
  pricing: v.record(v.string(), ModelPrice),
  sources: v.array(v.object({ path: v.string(), sha256: v.string() })),
})

export type Config = v.InferOutput<typeof Config>

export const DEFAULTS: Omit<Config, 'sources'> = {
  pair_loop: {
    coder: 'claude',
    reviewer: 'codex',
    max_rounds: 3,
    reviewer_timeout_s: 900,
    review_wait_s: 100,
    max_diff_bytes: 200_000,
    reviewer_cmd: null,
    reviewer_model: null,
    claude_bin: 'claude',
    codex_bin: 'codex',
    gemini_bin: 'gemini',
    pr_bots: [...DEFAULT_PR_BOTS],
    pr_action_reviews: [{ marker: PAIR_LOOP_REVIEW_MARKER }],
    pr_final_round: false,
    allow_reviewer_cmd: false,
    allow_same_vendor: false,
    reviewer_env: {},
    claude_config_dir: null,
    codex_home: null,
    gemini_cli_home: null,
    reviewers_fallback: [],
    reviewers: null,
    approval: 'all',
    pr_max_rounds: 3,
    stalemate_rounds: 2,
    reviewer_resume_s: 300,
    block_on: DEFAULT_BLOCK_ON,
    review_instructions: null,
    review_exclude: [],
  },
  budget: { per_run_usd: null, warn_ratio: 0.8 },
  pricing: {},
}

export const REPO_CONFIG_NAME = '.pair-loop.json'

/**
 * Defaults, then the home file (the person's own), then the repository's file: each section merged key by key. A
 * repository file that sets a key which runs a program, moves money, decides what counts or narrows the reviewer's
 * view, or any key at all when its bytes are not the blob git tracks at the run's base (`baseBlob`: its id there,
 * null when the base has none), must have been trusted (`pair-loop trust`) in this exact content: else
 * `config_untrusted`.
 */
export function loadConfig({
  repo,
  home,
  baseBlob = null,
}: {
  repo?: string
  home?: string
  baseBlob?: string | null
} = {}): Config {
  const config: Config = { ...structuredClone(DEFAULTS), sources: [] }
  const own = readConfig(configPath(home))
  const repoFile = repo ? readConfig(join(repo, REPO_CONFIG_NAME)) : undefined
  if (repoFile) {
    const tracked = baseBlob !== null && gitObjectId('blob', repoFile.bytes, baseBlob) === baseBlob
    const untrusted = keysNeedingTrust(repoFile.parsed, own?.parsed, { tracked })
    if (untrusted.length > 0 && trustedSha(repoFile.path, home) !== repoFile.sha256) {
      const effects = untrusted.map((key) => {
        const value = valueAt(repoFile.parsed, key)
        return { key, value, effect: trustEffect(key, value, inForce(own?.parsed, key)) }
      })
      untrustedConfig(repoFile, effects, tracked, repo!)
    }
  }
  for (const file of [own, repoFile]) {
    if (!file) continue
    config.sources.push({ path: file.path, sha256: file.sha256 })
    Object.assign(config.pair_loop, file.parsed.pair_loop)
    Object.assign(config.budget, file.parsed.budget)
    Object.assign(config.pricing, file.parsed.pricing)
  }
  return config
}

/** A key's value without the repository file: the person's own, else the default (null when neither sets it). */
const inForce = (own: ConfigFile | undefined, key: string) => valueAt(own, key) ?? valueAt(DEFAULTS, key) ?? null

/** One key a repository file sets: its value, what it does with it, and whether only the person's trust honours it. */
export interface Setting {
  key: string
  value: unknown
  needs_trust: boolean
  effect: string
}

/** Every key `file` sets, with its value and its effect against the person's own config (`pair-loop trust`). */
export function settingsOf(file: ConfigFile, own: ConfigFile | undefined, needingTrust: string[]): Setting[] {
  return keysSet(file).map((key) => {
    const value = valueAt(file, key)
    return { key, value, needs_trust: needingTrust.includes(key), effect: keyEffect(key, value, inForce(own, key)) }
  })
}

/** The value at a dotted key (`pair_loop.coder`, `pricing`) of a config. */
function valueAt(config: object | undefined, key: string): unknown {
  const [section, name] = key.split('.') as [string, string | undefined]
  const inSection = (config as Record<string, Record<string, unknown> | undefined> | undefined)?.[section]
  return name === undefined ? inSection : inSection?.[name]
}

export interface ConfigText {
  path: string
  sha256: string
  bytes: Buffer
  parsed: ConfigFile
}

/**
 * A config file read whole: its parsed content and the SHA-256 of its exact bytes; none when it does not exist. A FIFO,
 * a device or a directory in its place (or a link to one) is `config_invalid`, never opened: reading it could hang.
 */
export function readConfig(path: string): ConfigText | undefined {
  let bytes: Buffer | undefined
  try {
    bytes = readRegularFile(path, (kind) => configInvalid(path, [notRegular(path, kind)]))
  } catch (error) {
    if (isPairLoopError(error)) throw error
    ioFailure(path, error, 'read')
  }
  if (bytes === undefined) return undefined
  const parsed = parseConfigText(bytes.toString('utf8'), path)
  return { path, sha256: hexDigest(bytes), bytes, parsed }
}

export function readConfigFile(file: string): ConfigFile | undefined {
  return readConfig(file)?.parsed
}

function parseConfigText(text: string, file: string): ConfigFile {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    configInvalid(file, [notJson(text, file, (error as Error).message)])
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) configInvalid(file, [notAnObject(file)])
  const result = v.safeParse(ConfigFile, json)
  if (!result.success) configInvalid(file, configProblems(ConfigFile, result.issues, file))
  return result.output
}

/** `config_invalid` in the person's words: the first problems in the message, all of them (and their keys) in details. */
function configInvalid(file: string, problems: ConfigProblem[]): never {
  const shown = problems.slice(0, 3).map((problem) => problem.message)
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''
  fail('config_invalid', `${shown.join('; ')}${more}`, {
    path: file,
    keys: problems.map((problem) => problem.key).filter(Boolean),
    issues: problems.map((problem) => problem.message),
  })
}

/**
 * The keys of a repository file that only the person's trust may set: what runs a program (`reviewer_cmd`,
 * `claude_bin`, `codex_bin`), moves money (`pricing`, a per-run budget above the person's own), decides what counts
 * (`coder`: whose transcripts are the coder's spend; `pr_bots`, `pr_action_reviews`: whose PR reviews block; a
 * `block_on` above the person's own, or the default: more findings let through to approval), steers the reviewer
 * (`review_instructions`), chooses the reviewer's model or shows the reviewer less of the change (`review_exclude`, a
 * `max_diff_bytes` below the person's own or the default). A file git does not track at the base (`tracked: false`) is the coder's to write: every key it sets.
 */
export function keysNeedingTrust(
  repoFile: ConfigFile,
  own: ConfigFile | undefined,
  { tracked }: { tracked: boolean },
): string[] {
  if (!tracked) return keysSet(repoFile)
  const keys: string[] = []
  const keysOfTrust = [
    'coder',
    'reviewer_cmd',
    'reviewer_model',
    'claude_bin',
    'codex_bin',
    'gemini_bin',
    'pr_bots',
    'pr_action_reviews',
    'allow_reviewer_cmd',
    'allow_same_vendor',
    'reviewer_env',
    'claude_config_dir',
    'codex_home',
    'gemini_cli_home',
    'reviewers_fallback',
    'review_instructions', // it steers the reviewer
    'review_exclude', // it blinds the reviewer to paths
    'reviewers',
    'approval',
  ] as const
  for (const key of keysOfTrust) {
    if (repoFile.pair_loop?.[key] !== undefined) keys.push(`pair_loop.${key}`)
  }
  if (repoFile.pricing !== undefined) keys.push('pricing')
  const asked = repoFile.budget?.per_run_usd
  const personal = own?.budget?.per_run_usd ?? null
  // a lower limit only spends less; no limit, or a higher one, lets the run spend more than the person said
  if (asked !== undefined && personal !== null && (asked === null || asked > personal)) keys.push('budget.per_run_usd')
  // a larger diff cap only shows the reviewer more; a smaller one (down to 1 byte) blinds it to the change
  const cap = repoFile.pair_loop?.max_diff_bytes
  if (cap !== undefined && cap < (own?.pair_loop?.max_diff_bytes ?? DEFAULTS.pair_loop.max_diff_bytes))
    keys.push('pair_loop.max_diff_bytes')
  if (loosens(repoFile.pair_loop?.block_on, own?.pair_loop?.block_on)) keys.push('pair_loop.block_on')
  return keys
}

/** Every key a config file sets, dotted (`pricing` as one). */
function keysSet(file: ConfigFile): string[] {
  return [
    ...Object.keys(file.pair_loop ?? {}).map((key) => `pair_loop.${key}`),
    ...Object.keys(file.budget ?? {}).map((key) => `budget.${key}`),
    ...(file.pricing !== undefined ? ['pricing'] : []),
  ]
}
