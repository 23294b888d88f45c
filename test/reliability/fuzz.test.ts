// Bad input, generated: property tests (fast-check) over the parsers and schemas that read what agents, CLIs and
// people hand us. None may throw anything but its own code; a verdict comes only from a line of its own.
// Seedable: RELIABILITY_SEED=<n> replays a run (the seed is printed); FUZZ_RUNS=<n> changes the number of cases
// (FUZZ_CLI_RUNS=<n> for the property that runs the CLI as processes).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ArgsDef } from 'citty'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { ScriptDef } from '../../lib/cli/cli.ts'
import { parseFlags } from '../../lib/cli/flags.ts'
import { readConfigFile } from '../../lib/run/config.ts'
import { claudeParser, scanClaude } from '../../lib/cost/claude.ts'
import { codexParser, scanCodex } from '../../lib/cost/codex.ts'
import type { Sink } from '../../lib/cost/line-reader.ts'
import { ERROR_CODES, PairLoopError, type ErrorCode } from '../../lib/ground/errors.ts'
import { renderHandoff } from '../../lib/run/handoff.ts'
import { neutralise } from '../../lib/ground/neutralise.ts'
import { parseFindings, parseVerdict, reviewerProse } from '../../lib/run/grammar.ts'
import { stripControl } from '../../lib/ground/text.ts'
import { judgeFailure } from '../../lib/review/failure.ts'
import { parseReviewerOutput } from '../../lib/review/output.ts'
import type { RunState } from '../../lib/run/state.ts'
import { parseRunState } from '../../lib/run/store.ts'
import { COMMANDS } from '../../scripts/commands.ts'
import { runCli, runCliProcess, sandbox, tempDir } from '../_helpers.ts'
import { stubPath } from '../_review.ts'
import { seedFor } from './_util.ts'
import { runState } from '../_state.ts'

const seed = seedFor('fuzz')
const RUNS = Number(process.env.FUZZ_RUNS) > 0 ? Number(process.env.FUZZ_RUNS) : 200
const tried: Record<string, number> = {}
afterAll(() => process.stderr.write(`[reliability/fuzz] cases per property: ${JSON.stringify(tried)} (seed ${seed})\n`))

/** fc.assert with the file's seed, counting the cases tried under `name`. */
async function check(name: string, property: fc.IProperty<any> | fc.IAsyncProperty<any>, numRuns = RUNS) {
  const details = await fc.check(property as fc.IAsyncProperty<any>, { numRuns, seed })
  tried[name] = (tried[name] ?? 0) + details.numRuns
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? `property ${name} failed (seed ${seed})`)
}

/** Throws nothing but a PairLoopError with one of `codes`. */
function onlyCodes(codes: ErrorCode[], run: () => unknown): unknown {
  try {
    return run()
  } catch (error) {
    if (error instanceof PairLoopError && codes.includes(error.code)) return error
    throw error
  }
}

// ---------------------------------------------------------------- generated reviewer text

/** Pieces that matter to the parsers, mixed with arbitrary text (control bytes, astral characters, lone surrogates). */
const PIECES = [
  'VERDICT: APPROVED',
  'VERDICT: CHANGES_REQUESTED',
  '**VERDICT:** APPROVED',
  'verdict : changes requested.',
  '`VERDICT: APPROVED`',
  '## VERDICT: APPROVED',
  'VERDICT: APPROVED with nits',
  '```',
  '````',
  '~~~',
  '```diff',
  '> ',
  '>',
  '  ',
  '\t',
  '* ',
  '**',
  '__',
  '#',
  '## Round 9 — REVIEWER (codex) · 2026-11-30T05:03Z',
  '### Findings',
  '1. [bug/major] src/a.ts:3-5 — off by one',
  '2) [tests] b.ts:1 - none',
  '**3.** [security/p0] `c.ts:9` — x',
  '10. [ nit / low ] d:1: y',
  '1. [',
  '2. []',
  '3. [a/b/c]',
  'reply (fixed): ',
  '\r',
  '\r\n',
  '\n',
  '\u2028',
  '\x85',
  '\x00',
  '\x1b[31m',
  '\x1b]0;t\x07',
  '\x1b',
  '\x7f',
  '\uFEFF',
  '\uFFFD',
  '😀',
  '\uD800',
  'é',
  'VERDICT',
  ':',
  'APPROVED',
]
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
)
const reviewerText = fc.oneof(
  fc.array(piece, { maxLength: 40 }).map((parts) => parts.join('')),
  fc
    .array(
      fc.array(piece, { maxLength: 6 }).map((parts) => parts.join('')),
      { maxLength: 25 },
    )
    .map((lines) => lines.join('\n')),
  fc.string({ unit: 'binary', maxLength: 300 }),
)

describe('fuzz: reviewer text parsers', () => {
  it('never throw on arbitrary reviewer text, and return well-formed results', async () => {
    await check(
      'parseVerdict/parseFindings/reviewerProse',
      fc.property(reviewerText, (text) => {
        expect([null, 'APPROVED', 'CHANGES_REQUESTED']).toContain(parseVerdict(text))
        const findings = parseFindings(text)
        findings.forEach((finding, index) => {
          expect(finding.n).toBe(index + 1)
          expect(finding.category.length).toBeGreaterThan(0)
          for (const n of [finding.line_start, finding.line_end])
            if (n !== null) expect(Number.isInteger(n) && n >= 0).toBe(true)
        })
        expect(reviewerProse(text, 200).length).toBeLessThanOrEqual(200 + 60)
      }),
    )
  })

  it('read a verdict only from a line that is a verdict on its own', async () => {
    await check(
      'verdict from a standalone line',
      fc.property(reviewerText, (text) => {
        const verdict = parseVerdict(text)
        const lines = stripControl(text).split('\n')
        if (verdict) expect(lines.some((line) => parseVerdict(line) === verdict)).toBe(true)
        // the same lines inside sentences: no verdict at all
        expect(parseVerdict(lines.map((line) => `Note: ${line}`).join('\n'))).toBeNull()
        // or quoted
        expect(parseVerdict(lines.map((line) => `> ${line}`).join('\n'))).toBeNull()
      }),
    )
  })

  it('find no verdict, finding or heading in any neutralised text', async () => {
    await check(
      'neutralise',
      fc.property(reviewerText, (text) => {
        const safe = neutralise(text)
        expect(parseVerdict(safe)).toBeNull()
        expect(parseFindings(safe)).toEqual([])
        expect(safe.split('\n').filter((line) => /^\s{0,3}#{1,6}(\s|$)/.test(line))).toEqual([])
      }),
    )
  })

  it('render HANDOFF.md with exactly its real headings, findings and verdict whatever the agents wrote', async () => {
    const text = fc.oneof(reviewerText, fc.constant(''))
    const parts = fc.record({
      task: text,
      summary: text,
      prose: text,
      category: text,
      path: text,
      finding: text,
      reply: text,
    })
    await check(
      'renderHandoff structure',
      fc.property(parts, (t) => {
        // the reviewer's output goes through the parsers, as `review` does; everything else is stored as given
        const output = `${t.prose}\n1. [${t.category}] ${t.path}:1 — ${t.finding}\nVERDICT: CHANGES_REQUESTED`
        const verdict = parseVerdict(output) ?? 'CHANGES_REQUESTED'
        const findings = parseFindings(output)
        const state = handoffState(t, { verdict, findings, summary: reviewerProse(output) })
        const rendered = renderHandoff(state)
        const lines = rendered.split('\n')
        expect(
          lines.filter((line) => /^\s{0,3}#{1,6}(\s|$)/.test(line)).map((line) => line.replace(/ · .*/, '')),
        ).toEqual([
          '# Pair-Loop Handoff — 20261130-051500-a1b2c3',
          '## Round 1 — CODER (claude)',
          '## Round 1 — REVIEWER (codex)',
          ...(findings.length ? ['### Findings'] : []),
        ])
        expect(lines.filter((line) => parseVerdict(line) !== null)).toEqual([`VERDICT: ${verdict}`])
        expect(parseVerdict(rendered)).toBe(verdict)
        // (a category is shown escaped where it could read as structure, so compare positions and severities)
        expect(parseFindings(rendered).map((f) => [f.n, f.severity])).toEqual(findings.map((f) => [f.n, f.severity]))
      }),
    )
  })
})

interface Review {
  verdict: 'APPROVED' | 'CHANGES_REQUESTED'
  findings: ReturnType<typeof parseFindings>
  summary: string
}

function handoffState(t: { task: string; summary: string; reply: string }, review: Review): RunState {
  const at = '2026-11-30T05:00:00.000Z'
  return runState({
    revision: 3,
    task: t.task,
    repo: '/tmp/r',
    rounds: [
      {
        n: 1,
        coder: {
          summary: t.summary,
          session_id: null,
          diff: null,
          findings_addressed: null,
          over_cap: false,
          over_budget: false,
          started_at: at,
          done_at: at,
        },
        reviewer: {
          tool: 'codex',
          fallback_used: false,
          verdict: review.verdict,
          summary: review.summary,
          session_id: null,
          model: null,
          usage: null,
          cost: null,
          calls: 1,
          duration_ms: 1,
          raw_output_path: null,
          over_budget: false,
          at,
          findings: review.findings.map((f) => ({
            ...f,
            id: `1.${f.n}`,
            round: 1,
            key: 'k',
            recurring: false,
            recurring_of: null,
          })),
        },
      },
    ],
    replies: Object.fromEntries(
      review.findings.map((f) => [
        `1.${f.n}`,
        { finding: `1.${f.n}`, key: 'k', disposition: 'question' as const, body: t.reply, at, comment_url: null },
      ]),
    ),
    created_at: at,
    updated_at: at,
  })
}

// ---------------------------------------------------------------- reviewer output (Claude JSON, Codex JSON lines, text)

const anyJson = fc.jsonValue({ maxDepth: 3 })
const claudeResult = fc.record(
  {
    type: fc.constantFrom('result', 'assistant', 'system'),
    subtype: fc.oneof(fc.constant('success'), anyJson),
    is_error: fc.oneof(fc.boolean(), anyJson),
    result: fc.oneof(reviewerText, anyJson),
    session_id: anyJson,
    usage: fc.oneof(
      anyJson,
      fc.record({
        input_tokens: anyJson,
        output_tokens: anyJson,
        cache_creation_input_tokens: anyJson,
        cache_read_input_tokens: anyJson,
        cache_creation: anyJson,
      }),
    ),
    modelUsage: fc.oneof(anyJson, fc.dictionary(fc.string(), fc.record({ costUSD: anyJson, outputTokens: anyJson }))),
    total_cost_usd: anyJson,
    errors: anyJson,
  },
  { requiredKeys: ['type'] },
)
const codexEvent = fc.record(
  {
    type: fc.constantFrom(
      'thread.started',
      'turn.started',
      'turn.completed',
      'turn.failed',
      'item.completed',
      'item.started',
      'error',
      'other',
    ),
    thread_id: anyJson,
    item: fc.oneof(
      anyJson,
      fc.record({ type: fc.constantFrom('agent_message', 'reasoning'), text: fc.oneof(reviewerText, anyJson) }),
    ),
    usage: fc.oneof(
      anyJson,
      fc.record({
        input_tokens: anyJson,
        cached_input_tokens: anyJson,
        output_tokens: anyJson,
        reasoning_output_tokens: anyJson,
      }),
    ),
    error: anyJson,
    message: anyJson,
  },
  { requiredKeys: ['type'] },
)
const reviewerStdout = fc.oneof(
  reviewerText,
  anyJson.map((value) => JSON.stringify(value)),
  claudeResult.map((value) => JSON.stringify(value)),
  fc.array(claudeResult).map((value) => JSON.stringify(value)),
  fc
    .array(
      fc.oneof(
        codexEvent.map((e) => JSON.stringify(e)),
        reviewerText,
      ),
    )
    .map((lines) => lines.join('\n')),
)

describe('fuzz: reviewer output', () => {
  it('parseReviewerOutput never throws, and gives sound fields', async () => {
    await check(
      'parseReviewerOutput',
      fc.property(reviewerStdout, fc.option(reviewerText), (stdout, lastMessage) => {
        const reply = parseReviewerOutput(stdout, lastMessage)
        expect(['claude-json', 'codex-jsonl', 'text']).toContain(reply.format)
        for (const field of [reply.text, reply.error, reply.session_id, reply.model])
          if (field !== null) expect(typeof field).toBe('string')
        for (const [key, value] of Object.entries(reply.usage ?? {}))
          expect(Number.isInteger(value) && value >= 0, `usage.${key} = ${value}`).toBe(true)
        if (reply.reported_usd !== null) expect(typeof reply.reported_usd).toBe('number')
      }),
    )
  })

  it('never judges a reviewer error, a failed exit or empty text to be a review', async () => {
    const outcome = fc.record({
      exitCode: fc.constantFrom<number | null>(0, 0, 0, 1, 3, null),
      signal: fc.constantFrom<NodeJS.Signals | null>(null, 'SIGKILL'),
      timedOut: fc.boolean(),
    })
    await check(
      'judgeFailure',
      fc.property(reviewerStdout, fc.option(reviewerText), reviewerText, outcome, (stdout, lastMessage, stderr, o) => {
        const reply = stdout.length || lastMessage ? parseReviewerOutput(stdout, lastMessage) : null
        const result = {
          ...o,
          stdout: Buffer.from(stdout),
          stderr: Buffer.from(stderr),
          durationMs: 1,
          truncated: false,
        }
        const failure = judgeFailure('custom', result, reply, 1_000)
        if (o.timedOut) expect(failure?.code).toBe('reviewer_timeout')
        else if (reply?.error) expect(failure?.code).toBe('reviewer_failed')
        // a reviewer that never started (no exit status, no signal) is missing: no retry brings it
        else if (o.exitCode === null && o.signal === null) expect(failure?.code).toBe('reviewer_unavailable')
        else if (o.exitCode !== 0 || !reply?.text?.trim()) expect(failure?.code).toBe('reviewer_failed')
        if (failure === null)
          expect(parseVerdict(stripControl(reply!.text!)) !== null || reply!.text!.trim().length > 0).toBe(true)
        if (failure) expect(failure.message).not.toMatch(/[\x00-\x08\x0b-\x1f]/)
      }),
    )
  })
})

// ---------------------------------------------------------------- transcript readers

/** A sink that records what a parser made of one line. */
function recordingSink(width: number) {
  const seen = { entries: [] as number[][], skips: [] as string[], models: [] as string[] }
  const sink: Sink = {
    entry: (numbers) => {
      expect(numbers).toHaveLength(width)
      seen.entries.push(numbers)
    },
    model: (name) => {
      expect(typeof name).toBe('string')
      seen.models.push(name)
      return seen.models.length - 1
    },
    skip: (reason) => {
      seen.skips.push(reason)
    },
  }
  return { sink, seen }
}

const goodClaude = (i: number, input: number, output: number) =>
  JSON.stringify({
    type: 'assistant',
    timestamp: `2026-11-30T05:${String(i % 60).padStart(2, '0')}:00.000Z`,
    sessionId: 's',
    requestId: `req_${i}`,
    message: {
      id: `msg_${i}`,
      model: 'claude-sonnet-4-5-20250929',
      usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 7 },
    },
  })
/** An assistant usage line with one field broken: it must be listed as skipped, never counted. */
const brokenClaude = fc
  .record({
    i: fc.nat(10_000),
    broken: fc.oneof(
      fc.tuple(
        fc.constantFrom('input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'),
        fc.constantFrom<unknown>(-1, 1.5, '12', {}, [], true, Number.NaN),
      ),
      fc.tuple(
        fc.constant('timestamp'),
        fc.constantFrom<unknown>('yesterday', '', 5, null, '2026-11-30T05:00:00', '2026-13-45T99:00:00Z'),
      ),
      fc.tuple(fc.constant('requestId'), fc.constantFrom<unknown>('', 5, {}, null)),
      fc.tuple(fc.constant('message.id'), fc.constantFrom<unknown>('', 5, [])),
    ),
  })
  .map(({ i, broken }) => {
    const [field, value] = broken as [string, unknown]
    const o = JSON.parse(goodClaude(i, 1, 1))
    if (field === 'timestamp' || field === 'requestId') o[field] = value
    else if (field === 'message.id') o.message.id = value
    else o.message.usage[field] = value
    return JSON.stringify(o)
  })
/** A line that is not a JSON object at all. */
const notJson = fc
  .string({ unit: 'grapheme', maxLength: 80 })
  .map((s) => s.replace(/[\r\n]/g, ' '))
  .filter((s) => !s.trimStart().startsWith('{') && s.trim() !== '')

describe('fuzz: transcript readers', () => {
  it('never crash on arbitrary lines, and yield only whole entries of sound numbers', async () => {
    const line = fc.oneof(
      reviewerText.map((s) => s.replace(/\n/g, ' ')),
      anyJson.map((v) => JSON.stringify(v)),
      fc
        .record({
          type: fc.constantFrom('assistant', 'user'),
          timestamp: fc.oneof(fc.constant('2026-11-30T05:00:00Z'), anyJson),
          message: fc.record({ id: anyJson, model: anyJson, usage: anyJson }),
        })
        .map((o) => JSON.stringify(o)),
      fc
        .record({
          type: fc.constantFrom('event_msg', 'turn_context', 'session_meta'),
          timestamp: fc.oneof(fc.constant('2026-11-30T05:00:00Z'), anyJson),
          payload: fc.oneof(
            anyJson,
            fc.record({
              type: fc.constant('token_count'),
              model: anyJson,
              info: fc.oneof(
                anyJson,
                fc.record({ total_token_usage: anyJson, last_token_usage: anyJson, model: anyJson }),
              ),
            }),
          ),
        })
        .map((o) => JSON.stringify(o)),
    )
    await check(
      'transcript lines',
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => {
        for (const parser of [
          claudeParser,
          codexParser({ PATH: '', HOME: '/nonexistent', CODEX_HOME: '/nonexistent' }),
        ] as const) {
          const { sink, seen } = recordingSink(parser.width)
          const state = parser.init('/fuzz.jsonl')
          const parse = parser.parse as (l: string, s: unknown, k: Sink, n: number) => void
          for (const [i, text] of lines.entries()) parse(text, state, sink, i + 1)
          for (const entry of seen.entries) for (const n of entry) expect(Number.isFinite(n)).toBe(true)
        }
      }),
    )
  })

  it('count the good Claude lines of a file exactly and list every bad one as skipped', async () => {
    const dir = tempDir('pl-fuzz-claude-')
    let file = 0
    await check(
      'claude transcript files',
      fc.property(
        fc.array(
          fc.oneof(
            { weight: 2, arbitrary: fc.constant('good') },
            { weight: 1, arbitrary: brokenClaude },
            { weight: 1, arbitrary: notJson },
          ),
          { maxLength: 30 },
        ),
        (kinds) => {
          let good = 0
          const lines = kinds.map((kind) => (kind === 'good' ? goodClaude(1000 + good++, 10, 20) : kind))
          const path = join(dir, `${file++}.jsonl`)
          writeFileSync(path, lines.map((l) => `${l}\n`).join(''))
          const scan = scanClaude(path, null)
          expect(scan.status).toBe('read')
          expect(scan.count).toBe(good)
          expect(scan.skipped.reduce((sum, s) => sum + s.count, 0)).toBe(lines.length - good)
        },
      ),
    )
  })

  it('count the usage of the good Codex lines exactly and list every bad one as skipped', async () => {
    const dir = tempDir('pl-fuzz-codex-')
    let file = 0
    const env = { PATH: '', HOME: dir, CODEX_HOME: dir }
    await check(
      'codex transcript files',
      fc.property(
        fc.array(
          fc.oneof(
            { weight: 2, arbitrary: fc.constant('good') },
            { weight: 1, arbitrary: fc.constantFrom('bad-usage', 'bad-time', 'bad-info') },
            { weight: 1, arbitrary: notJson },
          ),
          { maxLength: 30 },
        ),
        (kinds) => {
          let input = 0
          let good = 0
          const event = (info: unknown, timestamp: unknown = '2026-11-30T05:00:00.000Z') =>
            JSON.stringify({ timestamp, type: 'event_msg', payload: { type: 'token_count', info } })
          const lines = [
            JSON.stringify({
              timestamp: '2026-11-30T05:00:00.000Z',
              type: 'turn_context',
              payload: { model: 'gpt-5' },
            }),
          ]
          for (const kind of kinds) {
            if (kind === 'good') {
              input += 100
              good++
              lines.push(
                event({
                  total_token_usage: { input_tokens: input, output_tokens: good },
                  last_token_usage: { input_tokens: 100, output_tokens: 1 },
                }),
              )
            } else if (kind === 'bad-usage')
              lines.push(event({ total_token_usage: { input_tokens: -5, output_tokens: 'x' } }))
            else if (kind === 'bad-time')
              lines.push(event({ total_token_usage: { input_tokens: input + 1 } }, 'yesterday'))
            else if (kind === 'bad-info') lines.push(event(42))
            else lines.push(kind)
          }
          const path = join(dir, `${file++}.jsonl`)
          writeFileSync(path, lines.map((l) => `${l}\n`).join(''))
          const scan = scanCodex(path, null, env)
          expect(scan.status).toBe('read')
          expect(scan.count).toBe(good)
          expect(scan.skipped.reduce((sum, s) => sum + s.count, 0)).toBe(kinds.length - good)
          let total = 0
          for (let i = 0; i < scan.count; i++) total += scan.numbers[i * codexParser().width + 2]!
          expect(total).toBe(good * 100)
        },
      ),
    )
  })
})

// ---------------------------------------------------------------- config and state schemas

describe('fuzz: config and state schemas', () => {
  it('read any config file as a config or config_invalid, never anything else', async () => {
    const dir = tempDir('pl-fuzz-config-')
    let file = 0
    const section = (keys: string[]) =>
      fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 8 })), anyJson, { maxKeys: 5 })
    const config = fc.oneof(
      anyJson.map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            pair_loop: fc.oneof(
              anyJson,
              section([
                'coder',
                'reviewer',
                'max_rounds',
                'reviewer_timeout_s',
                'max_diff_bytes',
                'reviewer_cmd',
                'reviewer_model',
                'claude_bin',
                'codex_bin',
              ]),
            ),
            budget: fc.oneof(anyJson, section(['per_run_usd', 'warn_ratio'])),
            pricing: fc.oneof(
              anyJson,
              fc.dictionary(
                fc.string({ maxLength: 12 }),
                fc.oneof(
                  anyJson,
                  section(['input', 'output', 'cache_read', 'cache_write_5m', 'cache_write_1h', 'cached_input']),
                ),
                { maxKeys: 3 },
              ),
            ),
          },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.uint8Array({ maxLength: 100 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    )
    await check(
      'config files',
      fc.property(config, (text) => {
        const path = join(dir, `${file++}.json`)
        writeFileSync(path, text)
        const result = onlyCodes(['config_invalid'], () => readConfigFile(path))
        if (result instanceof PairLoopError) {
          expect(result.details.path).toBe(path)
          expect(result.message.length).toBeGreaterThan(0)
        } else {
          expect(typeof result).toBe('object')
        }
      }),
    )
  })

  const validState = (): RunState => {
    const state = handoffState(
      { task: 't', summary: 's', reply: 'r' },
      { verdict: 'CHANGES_REQUESTED', findings: parseFindings('1. [bug] a.ts:1 — f'), summary: 'p' },
    )
    state.failed_reviews.push({
      at: state.created_at,
      round: 1,
      tool: 'custom',
      code: 'reviewer_failed',
      message: 'm',
      cost: null,
      raw_output_path: null,
      session_id: null,
    })
    return state
  }

  /** The error a state file that is not a run state gives: state_malformed, naming the file. */
  const malformed = (result: unknown) => {
    expect(result).toBeInstanceOf(PairLoopError)
    expect((result as PairLoopError).code).toBe('state_malformed')
    expect((result as PairLoopError).details.path).toBe('/fuzz/state.json')
    expect((result as PairLoopError).message).toContain('/fuzz/state.json')
  }

  it('read no arbitrary JSON or text as a run state (state_malformed naming the file), and a valid state in any layout as itself', async () => {
    const whole = validState()
    await check(
      'state: arbitrary JSON',
      fc.property(
        fc.oneof(
          anyJson.map((value) => ({ text: JSON.stringify(value), valid: false })),
          fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ text, valid: false })),
          fc
            .constantFrom<string | number>(0, 1, 2, 4, '\t', ' \r\n')
            .map((indent) => ({ text: JSON.stringify(whole, null, indent), valid: true })),
        ),
        ({ text, valid }) => {
          const result = onlyCodes(['state_malformed'], () => parseRunState(text, '/fuzz/state.json'))
          if (valid) expect(result).toEqual(whole)
          else malformed(result)
        },
      ),
    )
  })

  it('read every truncation of a valid state file as state_malformed, or as the whole state', async () => {
    const text = `${JSON.stringify(validState(), null, 2)}\n`
    const whole = parseRunState(text, 'x')
    await check(
      'state: truncations',
      fc.property(fc.nat(text.length), (cut) => {
        const result = onlyCodes(['state_malformed'], () => parseRunState(text.slice(0, cut), '/fuzz/state.json'))
        if (!(result instanceof PairLoopError)) expect(result).toEqual(whole)
      }),
      Math.min(RUNS, text.length),
    )
  })

  it('read a valid state with any one value replaced as exactly that state, or as state_malformed naming that value', async () => {
    const base = validState()
    const paths: string[][] = []
    const walk = (value: unknown, path: string[]) => {
      paths.push(path)
      if (value && typeof value === 'object')
        for (const [key, child] of Object.entries(value)) walk(child, [...path, key])
    }
    walk(base, [])
    const replaced = paths.filter((p) => p.length > 0)
    const oneReplaced = (path: string[], value: unknown) => {
      const copy = structuredClone(base) as any
      let at = copy
      for (const key of path.slice(0, -1)) at = at[key]
      at[path.at(-1)!] = value
      const written = JSON.stringify(copy)
      const result = onlyCodes(['state_malformed'], () => parseRunState(written, '/fuzz/state.json'))
      if (!(result instanceof PairLoopError)) {
        // nothing dropped, defaulted or coerced: the new value is read as written (an array is no empty object; -0 is
        // written as 0)
        expect(result).toEqual(JSON.parse(written))
        return
      }
      malformed(result)
      // the issues name the value replaced, or a key inside it
      const named = (result.details.issues as string[]).map((issue) => issue.slice(0, issue.indexOf(': ')))
      const dotted = path.join('.')
      expect(
        named.some((at) => at === dotted || at.startsWith(`${dotted}.`)),
        `${dotted} = ${JSON.stringify(value)}: ${named}`,
      ).toBe(true)
    }
    // every value by each of the shapes a value wrongly takes most often, then arbitrary JSON anywhere
    for (const path of replaced) for (const value of [[], {}, null, '', 0, -1, 1.5, 'x', true]) oneReplaced(path, value)
    await check('state: one value replaced', fc.property(fc.constantFrom(...replaced), anyJson, oneReplaced))
  })
})

// ---------------------------------------------------------------- the command line

/** Pieces of an argv for the flags of `defs`: real flags with and without values, negations, junk. */
function argvTokens(flagNames: string[], extra: string[] = []) {
  // argv strings never hold NUL (the kernel cannot pass one); anything else goes
  const word = fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.replace(/\0/g, ''))
  const token = fc.oneof(
    fc.constantFrom(...flagNames).map((f) => `--${f}`),
    fc.tuple(fc.constantFrom(...flagNames), word).map(([f, v]) => `--${f}=${v}`),
    fc.constantFrom(...flagNames).map((f) => `--no-${f}`),
    word.map((w) => `--${w}`),
    fc.constantFrom(
      '-',
      '--',
      '-x',
      '--=',
      '---',
      '--run',
      '20261130-051500-a1b2c3',
      '1.1',
      'fixed',
      'APPROVED',
      'sarif',
      '999999999999999999999',
      '-1',
      '1e3',
      '0x10',
      ' ',
      ...extra,
    ),
    word,
  )
  return { word, token }
}

async function commandDefs(): Promise<Map<string, ScriptDef<any>>> {
  const defs = new Map<string, ScriptDef<any>>()
  for (const [name, load] of Object.entries(COMMANDS)) defs.set(name, (await load()).default)
  return defs
}

/**
 * A value for a flag that cannot be read as a flag: anything but NUL (argv cannot hold one), not starting with '-',
 * often one a parser could take for something else (a number, a boolean, an `=`, spaces).
 */
const flagValue = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.constantFrom('1', '0', '1e3', '0x10', '12.50', 'true', 'false', 'null', 'a=b', '=', ' ', ' a ', 'a b', '"q"'),
  )
  .map((s) => s.replace(/\0/g, ''))
  .filter((s) => s.length > 0 && !s.startsWith('-'))

interface GivenFlag {
  flag: string
  /** What parsing must give for it. */
  want: string | boolean
  argv: string[]
}

/** Some of a command's own flags in any order, each spelt one of its ways: `--f v`, `--f=v`, `--b`, `--no-b`. */
function givenFlags(def: ScriptDef<any>): fc.Arbitrary<GivenFlag[]> {
  const flags = Object.entries(def.args as ArgsDef).filter(([, arg]) => arg.type !== 'positional')
  const one = ([flag, arg]: [string, ArgsDef[string]]): fc.Arbitrary<GivenFlag> =>
    arg.type === 'boolean'
      ? fc.boolean().map((on) => ({ flag, want: on, argv: [on ? `--${flag}` : `--no-${flag}`] }))
      : fc
          .tuple(arg.type === 'enum' ? fc.constantFrom(...(arg.options as string[])) : flagValue, fc.boolean())
          .map(([value, inline]) => ({
            flag,
            want: value,
            argv: inline ? [`--${flag}=${value}`] : [`--${flag}`, value],
          }))
  return fc.shuffledSubarray(flags).chain((chosen) => (chosen.length ? fc.tuple(...chosen.map(one)) : fc.constant([])))
}

/** The command's flags a parse must refuse when missing. */
const requiredFlags = (def: ScriptDef<any>) =>
  Object.entries(def.args as ArgsDef)
    .filter(([, arg]) => (arg as { required?: boolean }).required)
    .map(([flag]) => flag)

/**
 * Throws a usage error naming one of `what`: in its details (flag, or argument for a stray word), else in its message
 * (citty's own "Missing required argument: --task" comes before pair-loop's check and carries no details).
 */
function usageNaming(run: () => unknown, what: string[]) {
  const result = onlyCodes(['usage'], run)
  expect(result, 'refused').toBeInstanceOf(PairLoopError)
  const { message, details } = result as PairLoopError
  const { flag, argument } = details as { flag?: string; argument?: string }
  if (flag === undefined && argument === undefined)
    expect(
      what.some((name) => message.includes(name)),
      message,
    ).toBe(true)
  else expect(what).toContain(flag ?? argument)
}

describe('fuzz: command-line flags', () => {
  it("reads back each of a command's own flags as given, in any order and spelling, or refuses a missing required one as usage", async () => {
    const defs = await commandDefs()
    await check(
      'flag parser: given flags',
      fc.property(
        fc.constantFrom(...defs.keys()).chain((name) => fc.tuple(fc.constant(name), givenFlags(defs.get(name)!))),
        ([name, given]) => {
          const def = defs.get(name)!
          const argv = given.flatMap((g) => g.argv)
          const missing = requiredFlags(def).filter((flag) => !given.some((g) => g.flag === flag))
          if (missing.length)
            return usageNaming(
              () => parseFlags(def, argv),
              missing.map((flag) => `--${flag}`),
            )
          const parsed = parseFlags(def, argv) as Record<string, unknown>
          for (const g of given) expect(parsed[g.flag], `${name} ${JSON.stringify(argv)}`).toBe(g.want)
        },
      ),
    )
  })

  it('refuses an unknown flag, a stray word, a flag given twice, a flag without its value or an enum value it does not take, as usage naming it', async () => {
    const defs = await commandDefs()
    const spellings = (def: ScriptDef<any>) =>
      new Set(
        Object.entries(def.args as ArgsDef).flatMap(([name, arg]) => {
          const kebab = name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
          const camel = name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
          const alias = ([] as string[]).concat((arg as { alias?: string | string[] }).alias ?? [])
          return [name, kebab, camel, ...alias, ...(arg.type === 'boolean' ? [`no-${name}`] : [])]
        }),
      )
    const defect = (def: ScriptDef<any>) => {
      const known = spellings(def)
      const valued = Object.entries(def.args as ArgsDef).filter(
        ([, arg]) => arg.type === 'string' || arg.type === 'enum',
      )
      const enums = valued.filter(([, arg]) => arg.type === 'enum')
      const kinds: fc.Arbitrary<{ argv: string[]; names: string[] }>[] = [
        flagValue
          .filter((word) => !word.includes('=') && !known.has(word))
          .map((word) => ({ argv: [`--${word}`], names: [`--${word}`] })),
        flagValue.map((word) => ({ argv: [word], names: [word] })),
      ]
      if (valued.length)
        kinds.push(
          fc
            .tuple(fc.constantFrom(...valued.map(([flag]) => flag)), flagValue)
            .map(([flag, value]) => ({ argv: [`--${flag}`, value, `--${flag}=${value}`], names: [`--${flag}`] })),
          fc
            .constantFrom(...valued.map(([flag]) => flag))
            .map((flag) => ({ argv: [`--${flag}`], names: [`--${flag}`] })),
        )
      if (enums.length)
        kinds.push(
          fc
            .tuple(fc.constantFrom(...enums), flagValue)
            .filter(([[, arg], value]) => !(arg as { options: string[] }).options.includes(value))
            .map(([[flag], value]) => ({ argv: [`--${flag}=${value}`], names: [`--${flag}`] })),
        )
      return fc.oneof(...kinds)
    }
    await check(
      'flag parser: defects',
      fc.property(
        fc
          .constantFrom(...defs.keys())
          .chain((name) => fc.tuple(fc.constant(name), givenFlags(defs.get(name)!), defect(defs.get(name)!))),
        ([name, given, bad]) => {
          const def = defs.get(name)!
          // the defect goes last, after every given flag: none of its tokens can be read as another flag's value
          const others = given.filter((g) => !bad.names.includes(`--${g.flag}`))
          const argv = [...others.flatMap((g) => g.argv), ...bad.argv]
          const missing = requiredFlags(def).filter((flag) => !others.some((g) => g.flag === flag))
          usageNaming(() => parseFlags(def, argv), [...bad.names, ...missing.map((flag) => `--${flag}`)])
        },
      ),
    )
  })
})

// The real commands, as the real CLI (dist/ under vitest, the .ts sources under bun), one process per case, on a
// repository with a live run: whatever the argv, one JSON document and a code from the table with its exit status.
const CLI_RUNS = Number(process.env.FUZZ_CLI_RUNS) > 0 ? Number(process.env.FUZZ_CLI_RUNS) : 40
const outcomes: Record<string, number> = {}
afterAll(() => process.stderr.write(`[reliability/fuzz] CLI outcomes: ${JSON.stringify(outcomes)}\n`))

describe('fuzz: the commands themselves', () => {
  const exits = new Map(Object.entries(ERROR_CODES).map(([code, { exit }]) => [code, exit]))

  it('answers any argv of any command with one document and a code from the table with its exit status, never internal', async () => {
    const defs = await commandDefs()
    const sb = sandbox({ 'src/a.ts': 'export const a = 1\n' })
    // no reviewer CLI and no gh of the developer's is ever called: the configured ones do not exist
    const missing = join(tempDir('pl-fuzz-none-'), 'missing')
    mkdirSync(sb.home, { recursive: true })
    writeFileSync(
      join(sb.home, 'config.json'),
      JSON.stringify({ pair_loop: { claude_bin: `${missing}/claude`, codex_bin: `${missing}/codex` } }),
    )
    const env = { ...sb.env, PAIR_LOOP_GH: `${missing}/gh` }
    // in this process, but the demo: it runs its stub reviewer beside itself, in its own runtime (a process)
    const run = (argv: string[]) =>
      (argv[0] === 'demo' ? runCliProcess : runCli)(argv, { cwd: sb.repo, env, timeoutMs: 30_000 })
    const started = await run(['start', '--task', 'fuzz the commands', '--budget-usd', '5'])
    expect(started.code, started.stderr).toBe(0)
    const runId: string = started.json.run_id
    const bodyFile = join(tempDir('pl-fuzz-body-'), 'body.txt')
    writeFileSync(bodyFile, 'an answer\n')
    // values a command can act on: the live run, finding ids, stub reviewers that answer at once, a body file
    const values = [
      runId,
      ...['0', '1', '2', '1.1', '1.2', '2.1', '0.5', '86401'],
      ...['claude', 'codex', 'sarif', 'rdjsonl', 'json', 'fixed', 'wont-fix', 'APPROVED', 'ABANDONED'],
      ...['approve', 'changes', 'crash', 'garbage', 'quota'].map((stub) => JSON.stringify(['sh', stubPath(stub)])),
      sb.repo,
      bodyFile,
      'HEAD',
    ]
    const { word, token } = argvTokens([...new Set([...defs.values()].flatMap((def) => Object.keys(def.args)))], values)
    /** An argv made of the command's own flags, each with a value it could take (or junk): it gets past the parser. */
    const wellFormed = (def: ScriptDef<any>) => {
      const flags = Object.entries(def.args as ArgsDef).filter(([, arg]) => arg.type !== 'positional')
      return fc
        .subarray(flags, { maxLength: Math.min(4, flags.length) })
        .chain((flags) =>
          fc.tuple(
            ...flags.map(([flag, arg]) =>
              arg.type === 'boolean'
                ? fc.constant([`--${flag}`])
                : fc
                    .oneof(
                      {
                        weight: 4,
                        arbitrary: fc.constantFrom(...(('options' in arg && arg.options) || []), ...values),
                      },
                      word,
                    )
                    .map((value) => [`--${flag}`, value]),
            ),
          ),
        )
        .map((pairs) => pairs.flat())
    }
    const named = fc
      .constantFrom(...defs.keys())
      .chain((name) =>
        fc.tuple(
          fc.constant(name),
          fc.oneof({ weight: 3, arbitrary: wellFormed(defs.get(name)!) }, fc.array(token, { maxLength: 6 })),
        ),
      )
    // any word, Object.prototype's keys included (`pair-loop toString` once ended as internal: the lookup is own-keys now)
    const unnamed = fc.tuple(
      fc.oneof(word, fc.constantFrom('toString', 'constructor', '__proto__', 'hasOwnProperty')),
      fc.array(token, { maxLength: 3 }),
    )
    await check(
      'CLI commands (processes)',
      fc.asyncProperty(fc.oneof({ weight: 9, arbitrary: named }, unnamed), async ([name, argv]) => {
        const result = await run([name, ...argv])
        const outcome = result.json?.errors?.[0]?.code ?? (result.code === 0 ? 'ok' : `exit ${result.code}`)
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
        const what = `pair-loop ${JSON.stringify([name, ...argv])}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`
        expect(result.code, what).not.toBeNull() // exited, not killed by its time limit
        if (
          ['--help', '-h', 'help'].includes(name) ||
          (defs.has(name) && (argv.includes('--help') || argv.includes('-h')))
        ) {
          expect(result.code, what).toBe(0)
          expect(result.stdout, what).toContain('pair-loop')
          return
        }
        if (name === 'stop-hook' && result.code === 0) {
          // the agents' hook format, not a pair-loop document: one object, `{}` or a block with its reason
          expect(
            Object.keys(result.json ?? { bad: 1 }).filter((key) => !['decision', 'reason'].includes(key)),
            what,
          ).toEqual([])
          return
        }
        if (name === 'mcp' && !argv.includes('--install') && result.code === 0) {
          // the MCP server (not --install, which prints its document): stdout is the protocol's, one JSON-RPC message a line
          for (const line of result.stdout.split('\n').filter(Boolean))
            expect(JSON.parse(line).jsonrpc, what).toBe('2.0')
          return
        }
        if (name === 'findings' && result.code === 0 && result.json?.version !== 1) {
          // --format sarif or rdjsonl: another tool's format, printed as it is (rdjsonl: one object a line, or none)
          for (const line of result.stdout.split('\n').filter(Boolean)) JSON.parse(line)
          return
        }
        expect(result.stdout.endsWith('\n') && result.stdout.indexOf('\n') === result.stdout.length - 1, what).toBe(
          true,
        )
        expect(result.json?.version, what).toBe(1)
        if (result.code === 0) return
        if (!result.json.errors) {
          // budget-check at its limit: its normal document with the budget_exceeded exit status
          expect([name, result.code, result.json.level], what).toEqual([
            'budget-check',
            exits.get('budget_exceeded'),
            'alert',
          ])
          return
        }
        const code: string = result.json.errors[0].code
        expect(exits.get(code), what).toBe(result.code)
        expect(code, what).not.toBe('internal')
        // the last stderr line names the code, on one line with no escape sequence or other control byte
        const last = result.stderr.slice(0, -1).split('\n').at(-1)!
        expect(result.stderr.endsWith('\n') && last.includes(code), what).toBe(true)
        expect(last, what).not.toMatch(/[\x00-\x08\x0a-\x1f\x7f-\x9f]/)
      }),
      CLI_RUNS,
    )
  }, 300_000)
})
