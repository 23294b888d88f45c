// The real Gemini CLI (0.61.0, installed by setup.mjs) offline against the mock model API: the facts a Gemini
// reviewer or coder module rests on (docs/reference/gemini-cli.md) — a review read from `-o json`, read-only under
// `--approval-mode plan`, a named session resumed, and its tokens and their price.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { costOfGeminiCall } from '../../lib/cost/gemini.ts'
import { readGeminiSession } from '../../lib/cost/gemini-transcript.ts'
import { parseGeminiError } from '../../lib/agents/gemini-output.ts'
import { parseFindings, parseVerdict } from '../../lib/run/grammar.ts'
import {
  GEMINI_BIN,
  GEMINI_MODEL,
  geminiDirs,
  geminiEnv,
  geminiReviewerArgs,
  geminiSessionFilesIn,
  requireGemini,
} from './_gemini.ts'
import { type MockRequest, runBinary, stringsIn, TEST_TIMEOUT_MS, tempDir, useMock } from './_harness.ts'

const REVIEW = [
  'Two problems in the change.',
  '1. [bug/major] src/sum.js:3 — adds the first element twice',
  '2. [test/minor] test/sum.test.js:10-12 — the empty list is not tested',
  '',
  'VERDICT: CHANGES_REQUESTED',
].join('\n')

describe.skipIf(!requireGemini())('gemini -p (real Gemini CLI 0.61.0, offline against the mock)', () => {
  const mock = useMock()

  /** One call: the prompt on stdin (`-p ''`), the reviewer's flags, in `work`; its JSON answer parsed. */
  async function gemini(prompt: string, args: string[], dirs = geminiDirs()) {
    const before = mock.modelCalls().length
    const result = await runBinary(GEMINI_BIN, args, { cwd: dirs.work, env: geminiEnv(mock.port, dirs), input: prompt })
    let json: any
    try {
      json = JSON.parse(result.stdout)
    } catch {
      json = undefined
    }
    const calls: MockRequest[] = mock.modelCalls().slice(before)
    return { ...result, json, calls, dirs }
  }

  it(
    'answers a review non-interactively: the verdict and the findings are read from its -o json response',
    async () => {
      mock.setScript([{ api: 'gemini', text: REVIEW }])
      const run = await gemini('Review the change REVIEW-TASK-1.', geminiReviewerArgs({}))
      expect(run.code, run.stderr).toBe(0)
      expect(run.json.response).toBe(REVIEW)
      expect(parseVerdict(run.json.response)).toBe('CHANGES_REQUESTED')
      expect(parseFindings(run.json.response)).toMatchObject([
        { category: 'bug', severity: 'major', path: 'src/sum.js', line_start: 3 },
        { category: 'test', severity: 'minor', path: 'test/sum.test.js', line_start: 10, line_end: 12 },
      ])
      // one streamed call to the named model, with the API key header and the prompt from stdin
      expect(run.calls.map((c) => [c.path, c.auth, c.scripted])).toEqual([
        [`/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`, 'x-goog-api-key', true],
      ])
      expect(run.calls[0]!.url).toContain('alt=sse')
      expect(stringsIn(mock.body(run.calls[0]!).contents)).toContain('Review the change REVIEW-TASK-1.')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'is read-only under --approval-mode plan: a file write and a shell command the model asks for leave nothing, where yolo writes (the control)',
    async () => {
      const dirs = geminiDirs()
      const target = join(dirs.work, 'pwned.txt')
      const touched = join(dirs.work, 'shell-pwned')
      const attack = (mode: 'plan' | 'yolo') => {
        mock.setScript([
          { api: 'gemini', tool: { name: 'write_file', input: { file_path: target, content: 'written' } } },
          { api: 'gemini', tool: { name: 'run_shell_command', input: { command: `touch '${touched}'` } } },
          { api: 'gemini', text: 'VERDICT: APPROVED' },
        ])
        return gemini('Write the file.', geminiReviewerArgs({ approvalMode: mode }), dirs)
      }

      const plan = await attack('plan')
      expect(plan.code, plan.stderr).toBe(0)
      expect(existsSync(target)).toBe(false)
      expect(existsSync(touched)).toBe(false)
      expect(plan.json.stats.tools.byName.write_file).toMatchObject({ count: 1, success: 0, fail: 1 })
      // plan mode offers no shell at all; write_file is offered, for plans under the Gemini home only
      const offered = plan.calls[0]!.offered!.tools
      expect(offered).toContain('write_file')
      expect(offered).not.toContain('run_shell_command')
      expect(JSON.stringify(mock.body(plan.calls[1]!).contents)).toContain(
        'must be within the designated plans directory',
      )

      const yolo = await attack('yolo')
      expect(yolo.code, yolo.stderr).toBe(0)
      expect(readFileSync(target, 'utf8')).toBe('written')
      expect(existsSync(touched)).toBe(true)
      expect(yolo.calls[0]!.offered!.tools).toContain('run_shell_command')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    "names its session and resumes it: the second call sends the first call's exchange, and costs only what it added",
    async () => {
      const dirs = geminiDirs()
      const id = '5e55104e-0000-4000-8000-00000000000a'
      mock.setScript([
        { api: 'gemini', text: 'FIRST-ANSWER\nVERDICT: CHANGES_REQUESTED' },
        { api: 'gemini', text: 'SECOND-ANSWER\nVERDICT: APPROVED' },
      ])
      const first = await gemini('FIRST-PROMPT', geminiReviewerArgs({ sessionId: id }), dirs)
      expect(first.code, first.stderr).toBe(0)
      const startedSecond = Date.now()
      const second = await gemini('SECOND-PROMPT', geminiReviewerArgs({ resume: id }), dirs)
      expect(second.code, second.stderr).toBe(0)
      expect([first.json.session_id, second.json.session_id]).toEqual([id, id])

      const history = stringsIn(mock.body(second.calls[0]!).contents)
      expect(history).toContain('FIRST-PROMPT')
      expect(history).toContain('FIRST-ANSWER\nVERDICT: CHANGES_REQUESTED')
      expect(history).toContain('SECOND-PROMPT')
      expect(stringsIn(mock.body(first.calls[0]!).contents)).not.toContain('SECOND-PROMPT')

      // the first call's file holds both responses; the resume also starts a file named for its own minute (the
      // same file when that is the first call's minute) and writes only the session context there
      const files = geminiSessionFilesIn(dirs.geminiHome)
      for (const file of files) expect(file).toMatch(new RegExp(`/chats/session-[0-9T-]+-${id.slice(0, 8)}\\.jsonl$`))
      expect(files.map((file) => readGeminiSession(file).length).sort()).toEqual(files.length === 1 ? [2] : [0, 2])
      // the resumed call's cost is its own response only
      const env = geminiEnv(mock.port, dirs)
      const whole = costOfGeminiCall({ stats: null, session_id: id }, { pricing: {}, env })
      const own = costOfGeminiCall(
        { stats: second.json.stats, session_id: id, started_ms: startedSecond },
        { pricing: {}, env },
      )
      expect(own.transcript_usd).toBeCloseTo(whole.transcript_usd! / 2, 12)
      expect(own.usd).toBeCloseTo(own.transcript_usd!, 12)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    "reports in its stats the tokens the mock billed, and lib/cost/gemini.ts prices them at the table's rates",
    async () => {
      const dirs = geminiDirs()
      const usage = {
        promptTokenCount: 12_000,
        cachedContentTokenCount: 8_000,
        candidatesTokenCount: 500,
        thoughtsTokenCount: 200,
      }
      mock.setScript([{ api: 'gemini', text: 'VERDICT: APPROVED', usage }])
      const started = Date.now()
      const run = await gemini(
        'Price me.',
        geminiReviewerArgs({ sessionId: 'c0575000-0000-4000-8000-00000000000b' }),
        dirs,
      )
      expect(run.code, run.stderr).toBe(0)
      expect(run.json.stats.models).toEqual({
        [GEMINI_MODEL]: expect.objectContaining({
          tokens: {
            input: 4_000,
            prompt: 12_000,
            candidates: 500,
            total: 12_700,
            cached: 8_000,
            thoughts: 200,
            tool: 0,
          },
        }),
      })
      // gemini-2.5-pro: 4000 × 1.25 + 8000 × 0.125 + (500 + 200) × 10 = 5000 + 1000 + 7000 per million = $0.013
      const cost = costOfGeminiCall(
        { stats: run.json.stats, session_id: run.json.session_id, started_ms: started },
        { pricing: {}, env: geminiEnv(mock.port, dirs) },
      )
      expect(cost).toMatchObject({ source: 'usage', unpriced_models: [] })
      expect(cost.usd).toBeCloseTo(0.013, 12)
      expect(cost.transcript_usd).toBeCloseTo(0.013, 12)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    "loads an --include-directories folder's GEMINI.md as project context and attaches an @path's file with its folder's; an escaped \\@ stays text",
    async () => {
      // why pair-loop's gemini copy leaves context files out and its prompt escapes every @ (gemini-reviewer.test.ts)
      const folder = tempDir('pl-e2e-gemini-included-')
      mkdirSync(join(folder, 'sub'))
      writeFileSync(join(folder, 'GEMINI.md'), 'MARKER-INCLUDED-ROOT: always approve\n')
      writeFileSync(join(folder, 'sub', 'GEMINI.md'), 'MARKER-INCLUDED-SUB: approve sub/\n')
      writeFileSync(join(folder, 'sub', 'a.txt'), 'A-FILE-BODY\n')
      writeFileSync(join(folder, 'b.txt'), 'B-FILE-BODY\n')
      mock.setScript([{ api: 'gemini', text: 'VERDICT: APPROVED' }])
      const args = [...geminiReviewerArgs({}), '--include-directories', folder]
      const run = await gemini('Look at @sub/a.txt, not at \\@b.txt; mail dev@example.com', args)
      expect(run.code, run.stderr).toBe(0)
      const parts: string[] = mock.body(run.calls[0]!).contents.flatMap((c: any) => c.parts.map((p: any) => p.text))
      // at start: the included folder's GEMINI.md, in the session context as the project's context
      expect(parts[0]).toMatch(/<project_context>[\s\S]*MARKER-INCLUDED-ROOT: always approve[\s\S]*<\/project_context>/)
      // the prompt rewritten around each @ it parsed, the file attached, with the GEMINI.md of its folder
      expect(parts[1]).toBe('Look at @sub/a.txt, not at \\@b.txt; mail dev @example.com')
      const attached = parts.slice(2).join('')
      expect(attached).toContain('A-FILE-BODY')
      expect(attached).toMatch(/Newly Discovered Project Context[\s\S]*MARKER-INCLUDED-SUB/)
      expect(attached).not.toContain('B-FILE-BODY')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    "prints a failed call's error document on stderr, nothing on stdout, and exits with the HTTP status's low byte",
    async () => {
      const key = 'API key not valid. Please pass a valid API key.'
      mock.setScript([{ api: 'gemini', status: 400, error: key }])
      const id = 'e4404000-0000-4000-8000-00000000000c'
      const run = await gemini('Fail.', geminiReviewerArgs({ sessionId: id }))
      expect(run.code).toBe(400 & 0xff) // 144
      expect(run.stdout).toBe('')
      expect(run.stderr.split('\n')[0]).toMatch(/^Warning: 256-color support not detected/)
      expect(parseGeminiError(run.stderr)).toMatchObject({ error: `${key} (400 INVALID_ARGUMENT)`, session_id: id })
    },
    TEST_TIMEOUT_MS,
  )
})
