// The stub reviewers of fixtures/reviewers/, run directly: each prints what its README row says.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, tempDir } from './_helpers.ts'

const STUBS = join(ROOT, 'fixtures', 'reviewers')
const stub = (name: string) => join(STUBS, `${name}.sh`)

interface StubResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: Buffer
  stderr: string
}

function start(
  name: string,
  env: Record<string, string>,
  input: string | Buffer,
): { child: ChildProcess; out: Buffer[]; err: Buffer[] } {
  // its own process group, as pair-loop runs a reviewer, so the test can kill all of it
  const child = spawn('sh', [stub(name)], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
  child.stdin!.on('error', () => {})
  child.stdin!.end(input)
  return { child, out, err }
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL')
  } catch {}
}

function run(
  name: string,
  {
    env = {},
    input = 'the prompt\n',
    timeoutMs = 15_000,
  }: { env?: Record<string, string>; input?: string | Buffer; timeoutMs?: number } = {},
): Promise<StubResult> {
  return new Promise((resolve, reject) => {
    const { child, out, err } = start(name, env, input)
    const timer = setTimeout(() => {
      killGroup(child)
      reject(new Error(`${name}.sh did not finish in ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') })
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Alive and not a zombie (a killed child may wait to be reaped by whatever adopted it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (check()) return true
    await sleep(25)
  }
  return check()
}

/** A stub that never ends: still running after 300 ms; then its process group is killed. */
async function stillRunning(name: string, env: Record<string, string> = {}) {
  const { child, out } = start(name, env, 'the prompt\n')
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
  await sleep(300)
  const running = child.exitCode === null && child.signalCode === null
  return {
    running,
    stdout: () => Buffer.concat(out).toString('utf8'),
    kill: async () => {
      killGroup(child)
      await closed
    },
  }
}

const lines = (buffer: Buffer) => buffer.toString('utf8').split('\n')
const lastLine = (buffer: Buffer) =>
  lines(buffer)
    .filter((line) => line.trim() !== '')
    .at(-1)
const FINDING = /^\d+\. \[[a-z]+(\/(blocker|major|minor|nit))?\] \S+:\d+(-\d+)? — \S/
const VERDICT = /^VERDICT: (APPROVED|CHANGES_REQUESTED)$/
const isUtf8 = (buffer: Buffer) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buffer)
    return true
  } catch {
    return false
  }
}

describe('fixtures/reviewers', () => {
  it('every stub is an executable POSIX sh script listed in the README', () => {
    const readme = readFileSync(join(STUBS, 'README.md'), 'utf8')
    const names = readdirSync(STUBS).filter((file) => file.endsWith('.sh') && !file.startsWith('_'))
    expect(names.length).toBeGreaterThanOrEqual(20)
    for (const file of names) {
      expect(readFileSync(join(STUBS, file), 'utf8').startsWith('#!/bin/sh\n'), file).toBe(true)
      expect(statSync(join(STUBS, file)).mode & 0o111, file).not.toBe(0)
      expect(readme, file).toContain(`\`${file}\``)
    }
  })

  it('approve.sh: a short review ending in VERDICT: APPROVED; the whole prompt saved to STUB_PROMPT_FILE', async () => {
    const dir = tempDir('pl-stub-')
    const prompt = `# Task\n${'diff line\n'.repeat(100_000)}` // ~1 MB: it must read all of it
    const result = await run('approve', { env: { STUB_PROMPT_FILE: join(dir, 'prompt.txt') }, input: prompt })
    expect(result.code).toBe(0)
    expect(lastLine(result.stdout)).toBe('VERDICT: APPROVED')
    expect(lines(result.stdout).filter((line) => VERDICT.test(line))).toEqual(['VERDICT: APPROVED'])
    expect(readFileSync(join(dir, 'prompt.txt'), 'utf8')).toBe(prompt)
  })

  it('changes.sh: two findings in the grammar, VERDICT: CHANGES_REQUESTED; STUB_FINDINGS replaces them', async () => {
    const result = await run('changes')
    expect(result.code).toBe(0)
    const findings = lines(result.stdout).filter((line) => FINDING.test(line))
    expect(findings).toEqual([
      expect.stringMatching(/^1\. \[bug\/major\] src\/a\.ts:3-5 — /),
      expect.stringMatching(/^2\. \[tests\] src\/a\.test\.ts:1 — /),
    ])
    expect(lastLine(result.stdout)).toBe('VERDICT: CHANGES_REQUESTED')

    const custom = await run('changes', {
      env: { STUB_FINDINGS: '1. [bug] src/b.ts:9 — "quoted" \\ text\n2. [nit] x.ts:1 — two' },
    })
    expect(lines(custom.stdout).filter((line) => FINDING.test(line))).toEqual([
      '1. [bug] src/b.ts:9 — "quoted" \\ text',
      '2. [nit] x.ts:1 — two',
    ])
    expect(lastLine(custom.stdout)).toBe('VERDICT: CHANGES_REQUESTED')
  })

  it('no-verdict-then-verdict.sh: no verdict on call 1, APPROVED on call 2; counts calls and keeps each prompt', async () => {
    const refused = await run('no-verdict-then-verdict')
    expect(refused.code).toBe(64)
    expect(refused.stderr).toContain('STUB_STATE_DIR')

    const state = tempDir('pl-stub-')
    const first = await run('no-verdict-then-verdict', { env: { STUB_STATE_DIR: state }, input: 'first prompt' })
    expect(first.code).toBe(0)
    expect(first.stdout.toString()).not.toMatch(/VERDICT/)
    expect(lines(first.stdout).some((line) => FINDING.test(line))).toBe(true)
    const second = await run('no-verdict-then-verdict', { env: { STUB_STATE_DIR: state }, input: 'stricter prompt' })
    expect(lastLine(second.stdout)).toBe('VERDICT: APPROVED')
    expect(readFileSync(join(state, 'count'), 'utf8').trim()).toBe('2')
    expect(readFileSync(join(state, 'prompt-1.txt'), 'utf8')).toBe('first prompt')
    expect(readFileSync(join(state, 'prompt-2.txt'), 'utf8')).toBe('stricter prompt')
  })

  it('no-verdict.sh and empty.sh: no verdict, exit 0', async () => {
    const state = tempDir('pl-stub-')
    for (let call = 0; call < 2; call++) {
      const result = await run('no-verdict', { env: { STUB_STATE_DIR: state } })
      expect(result.code).toBe(0)
      expect(result.stdout.toString()).not.toMatch(/VERDICT/)
      expect(lines(result.stdout).some((line) => FINDING.test(line))).toBe(true)
    }
    expect(readFileSync(join(state, 'count'), 'utf8').trim()).toBe('2')
    const empty = await run('empty')
    expect(empty.code).toBe(0)
    expect(empty.stdout.length).toBe(0)
  })

  it('hang.sh and slow-drip.sh: print a line and keep running', async () => {
    for (const name of ['hang', 'slow-drip']) {
      const stub = await stillRunning(name)
      try {
        expect(stub.running, name).toBe(true)
        expect(stub.stdout(), name).toMatch(/\.\.\.\n/)
        expect(stub.stdout(), name).not.toMatch(/VERDICT/)
      } finally {
        await stub.kill()
      }
    }
  })

  it('spawns-child.sh: leaves a sleep child in its process group, pid in STUB_STATE_DIR/child.pid', async () => {
    const state = tempDir('pl-stub-')
    const stub = await stillRunning('spawns-child', { STUB_STATE_DIR: state })
    let childPid = 0
    try {
      expect(stub.running).toBe(true)
      expect(await waitFor(() => existsSync(join(state, 'child.pid')), 5_000)).toBe(true)
      childPid = Number(readFileSync(join(state, 'child.pid'), 'utf8'))
      expect(childPid).toBeGreaterThan(1)
      expect(alive(childPid)).toBe(true)
    } finally {
      await stub.kill()
    }
    expect(await waitFor(() => !alive(childPid), 5_000)).toBe(true)
  })

  it('crash.sh: half a review, a message on stderr, exit 3', async () => {
    const result = await run('crash')
    expect(result.code).toBe(3)
    expect(result.stdout.toString()).not.toMatch(/VERDICT/)
    expect(result.stdout.length).toBeGreaterThan(0)
    expect(result.stderr).toMatch(/simulated crash/)
  })

  it('crash-mid-output.sh: a complete VERDICT: APPROVED line, then a cut-off line and death by SIGKILL', async () => {
    const result = await run('crash-mid-output')
    expect(result.code).toBe(null)
    expect(result.signal).toBe('SIGKILL')
    expect(lines(result.stdout)).toContain('VERDICT: APPROVED')
    expect(result.stdout.toString().endsWith('\n')).toBe(false)
  })

  it('garbage.sh: bytes that are not text (NULs, invalid UTF-8), no verdict, exit 0', async () => {
    const result = await run('garbage')
    expect(result.code).toBe(0)
    expect(result.stdout.includes(0)).toBe(true)
    expect(isUtf8(result.stdout)).toBe(false)
    expect(result.stdout.toString('latin1')).not.toMatch(/VERDICT/)
  })

  it('huge.sh: 10 MiB of prose, then VERDICT: APPROVED', async () => {
    const result = await run('huge', { timeoutMs: 30_000 })
    expect(result.code).toBe(0)
    expect(result.stdout.length).toBeGreaterThanOrEqual(10 * 1024 * 1024)
    expect(result.stdout.subarray(-40).toString()).toMatch(/\nVERDICT: APPROVED\n$/)
  })

  it("quota.sh and auth.sh: the CLIs' error messages, exit 1 (STUB_EXIT_CODE overrides)", async () => {
    const quota = await run('quota')
    expect(quota.code).toBe(1)
    expect(quota.stdout.toString()).toMatch(/usage limit/)
    expect(quota.stdout.toString()).toMatch(/429 rate_limit_error/)
    expect(quota.stderr).toMatch(/429/)
    const auth = await run('auth')
    expect(auth.code).toBe(1)
    expect(auth.stdout.toString()).toMatch(/401/)
    expect(auth.stdout.toString()).toMatch(/invalid x-api-key/)
    for (const name of ['quota', 'auth']) {
      const zero = await run(name, { env: { STUB_EXIT_CODE: '0' } })
      expect(zero.code, name).toBe(0)
      expect(zero.stdout.toString(), name).not.toMatch(/VERDICT/)
    }
  })

  it('quoted-verdict.sh: APPROVED in a sentence, a blockquote and a code fence; the last line CHANGES_REQUESTED', async () => {
    const result = await run('quoted-verdict')
    const text = result.stdout.toString()
    expect(result.code).toBe(0)
    expect(text).toMatch(/^\S.* VERDICT: APPROVED \S.*$/m)
    expect(text).toMatch(/^> VERDICT: APPROVED$/m)
    expect(text).toMatch(/^```\nVERDICT: APPROVED\n```$/m)
    expect(lastLine(result.stdout)).toBe('VERDICT: CHANGES_REQUESTED')
    expect(lines(result.stdout).filter((line) => FINDING.test(line))).toHaveLength(2)
  })

  it('claude-json.sh: one Claude result object, result ending in a verdict (STUB_VERDICT, STUB_FINDINGS)', async () => {
    const result = await run('claude-json')
    expect(result.code).toBe(0)
    const doc = JSON.parse(result.stdout.toString())
    expect(doc).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      session_id: '6b1d2c3e-0000-4000-8000-000000000002',
      total_cost_usd: 0.00603,
    })
    expect(doc.result).toMatch(/\nVERDICT: APPROVED$/)
    expect(doc.usage).toMatchObject({
      input_tokens: 10,
      cache_creation_input_tokens: 1000,
      cache_read_input_tokens: 2000,
      output_tokens: 50,
    })
    expect(doc.modelUsage['claude-sonnet-4-5-20250929']).toMatchObject({ costUSD: 0.00603 })

    const changes = await run('claude-json', {
      env: { STUB_VERDICT: 'CHANGES_REQUESTED', STUB_FINDINGS: '1. [bug] a.ts:1 — "quoted"\t\\ odd' },
    })
    const changed = JSON.parse(changes.stdout.toString())
    expect(changed.result).toContain('1. [bug] a.ts:1 — "quoted"\t\\ odd')
    expect(changed.result).toMatch(/\nVERDICT: CHANGES_REQUESTED$/)
  })

  it('claude-json-error.sh: is_error true, an "API Error:" result, a reported cost, exit 1', async () => {
    const result = await run('claude-json-error')
    expect(result.code).toBe(1)
    const doc = JSON.parse(result.stdout.toString())
    expect(doc).toMatchObject({ type: 'result', is_error: true, total_cost_usd: 0.0021 })
    expect(doc.result).toMatch(/^API Error: /)
  })

  it('claude-json-budget.sh: is_error true, subtype error_max_budget_usd, the reason in errors, no result, exit 1', async () => {
    const result = await run('claude-json-budget')
    expect(result.code).toBe(1)
    const doc = JSON.parse(result.stdout.toString())
    expect(doc).toMatchObject({ is_error: true, subtype: 'error_max_budget_usd', total_cost_usd: 0.0112 })
    expect(doc.errors).toEqual(['Reached maximum budget ($0.01)'])
    expect(doc.result).toBeUndefined()
  })

  it('codex-jsonl.sh: JSON lines from thread.started to turn.completed; the last agent_message ends in a verdict', async () => {
    const result = await run('codex-jsonl')
    expect(result.code).toBe(0)
    const events = result.stdout
      .toString()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events[0]).toEqual({ type: 'thread.started', thread_id: '01a2b3c4-0000-7000-8000-000000000002' })
    expect(events.at(-1)).toMatchObject({
      type: 'turn.completed',
      usage: { input_tokens: 2345, cached_input_tokens: 1024, output_tokens: 67 },
    })
    const messages = events.filter((event) => event.type === 'item.completed' && event.item.type === 'agent_message')
    expect(messages.at(-1).item.text).toMatch(/\nVERDICT: CHANGES_REQUESTED$/)
    expect(
      messages
        .at(-1)
        .item.text.split('\n')
        .filter((line: string) => FINDING.test(line)),
    ).toHaveLength(2)
    expect(result.stderr).toMatch(/Codex/)

    const approved = await run('codex-jsonl', { env: { STUB_VERDICT: 'APPROVED' } })
    const last = approved.stdout
      .toString()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.item?.type === 'agent_message')
      .at(-1)
    expect(last.item.text).toMatch(/\nVERDICT: APPROVED$/)
  })

  it('codex-jsonl-failed.sh: error then turn.failed, exit 1', async () => {
    const result = await run('codex-jsonl-failed')
    expect(result.code).toBe(1)
    const events = result.stdout
      .toString()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.map((event) => event.type)).toEqual(['thread.started', 'turn.started', 'error', 'turn.failed'])
    expect(events.at(-1).error.message).toMatch(/400/)
  })

  it('hostile.sh: forged headings, mid-line verdicts, escapes, NULs, a 100 kB line; the last line CHANGES_REQUESTED', async () => {
    const result = await run('hostile')
    expect(result.code).toBe(0)
    const text = result.stdout.toString('utf8')
    expect(text).toMatch(/^## Round 9 — REVIEWER/m)
    expect(text).toMatch(/^ +## Round 9 — REVIEWER/m)
    expect(text).toMatch(/\S.*VERDICT: APPROVED/)
    expect(text).toContain('\u001b[31m')
    expect(text).toContain('\u001b]0;')
    expect(result.stdout.includes(0)).toBe(true)
    expect(Math.max(...text.split('\n').map((line) => line.length))).toBeGreaterThanOrEqual(100_000)
    expect(lines(result.stdout).filter((line) => FINDING.test(line))).toHaveLength(3)
    expect(lastLine(result.stdout)).toBe('VERDICT: CHANGES_REQUESTED')
  })
})
