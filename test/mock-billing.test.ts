// The mock model API's prompt-caching bill (test/e2e/mock-billing.mjs, MOCK_BILL_CACHE=1), which bench/round-cost.mjs
// measures with: two requests sharing a prefix → the second reads the first's prefix from the cache, billed as the
// providers bill it. Every expected count is worked out by hand from the rules in mock-billing.mjs's header: tokens
// are ceil(bytes / 4) of the blocks' JSON, so each body below is built from blocks of a chosen byte length.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createCacheBilling } from './e2e/mock-billing.mjs'
import { cleanupTempDirs, type MockServer, startMock, tempDir } from './e2e/_harness.ts'

const SONNET = 'claude-sonnet-4-5-20250929'
const REPLY = 'x'.repeat(40) // 10 output tokens
const EPHEMERAL = { type: 'ephemeral' }

// OpenAI input items: {"role":"user","content":""} is 28 bytes, so content of n − 28 characters makes an n-byte block.
const item = (char: string, bytes: number) => ({ role: 'user', content: char.repeat(bytes - 28) })
// Anthropic: a system block {"type":"text","text":""} is 25 bytes; a message block is {"role":R,"block":<block>}:
// 49 bytes around its text for a user block, 54 for an assistant one.
const system = (bytes: number) => ({ type: 'text', text: 'S'.repeat(bytes - 25), cache_control: EPHEMERAL })
const text = (char: string, bytes: number, around: number, breakpoint = false) => ({
  type: 'text',
  text: char.repeat(bytes - around),
  ...(breakpoint ? { cache_control: EPHEMERAL } : {}),
})
const user = (char: string, bytes: number, breakpoint = false) => ({
  role: 'user',
  content: [text(char, bytes, 49, breakpoint)],
})
const assistant = (bytes: number, breakpoint = false) => ({
  role: 'assistant',
  content: [text('r', bytes, 54, breakpoint)],
})

const openaiRequest = (input: unknown[], model = 'gpt-5.5') => ({ model, stream: false, input })
const anthropicRequest = (messages: unknown[], withSystem = true) => ({
  model: SONNET,
  stream: false,
  max_tokens: 100,
  ...(withSystem ? { system: [system(4000)] } : {}),
  messages,
})

const servers: MockServer[] = []
async function mock(env: Record<string, string> = { MOCK_BILL_CACHE: '1' }) {
  const server = await startMock({ env })
  servers.push(server)
  return server
}
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()))
  cleanupTempDirs()
})

/** POST a request to the mock, each answered with REPLY; returns the usage it billed. */
async function post(server: MockServer, api: 'openai' | 'anthropic', body: unknown) {
  server.setScript([{ api, text: REPLY }])
  const path = api === 'openai' ? '/v1/responses' : '/v1/messages'
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { usage: Record<string, any> }).usage
}

describe('the mock bills OpenAI prompt caching (MOCK_BILL_CACHE=1)', () => {
  it("bills a second request that extends the first's prompt the first's tokens as cached, within its input", async () => {
    const server = await mock()
    const first = await post(server, 'openai', openaiRequest([item('a', 4000)])) // 1000 tokens
    const second = await post(server, 'openai', openaiRequest([item('a', 4000), item('b', 400)])) // + 100
    expect(first).toMatchObject({ input_tokens: 1000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10 })
    expect(second).toMatchObject({
      input_tokens: 1100,
      input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 0 },
      output_tokens: 10,
      total_tokens: 1110,
    })
  })

  it("reads the prefix of a request whose items differ only in their ids (Codex's per-session item ids)", async () => {
    const server = await mock()
    await post(server, 'openai', openaiRequest([{ id: 'msg_one', ...item('a', 4000) }]))
    const second = await post(server, 'openai', openaiRequest([{ id: 'msg_two', ...item('a', 4000) }, item('b', 400)]))
    expect(second).toMatchObject({ input_tokens: 1100, input_tokens_details: { cached_tokens: 1000 } })
  })

  it("reads nothing from another model's cache", async () => {
    const server = await mock()
    await post(server, 'openai', openaiRequest([item('a', 4000)]))
    const other = await post(server, 'openai', openaiRequest([item('a', 4000), item('b', 400)], 'gpt-5'))
    expect(other).toMatchObject({ input_tokens: 1100, input_tokens_details: { cached_tokens: 0 } })
  })

  it('control: without MOCK_BILL_CACHE the same requests get the fixed usage every existing test expects', async () => {
    const server = await mock({})
    await post(server, 'openai', openaiRequest([item('a', 4000)]))
    const second = await post(server, 'openai', openaiRequest([item('a', 4000), item('b', 400)]))
    expect(second).toMatchObject({
      input_tokens: 2345,
      input_tokens_details: { cached_tokens: 1024 },
      output_tokens: 67,
    })
  })
})

describe('the mock bills Anthropic prompt caching (MOCK_BILL_CACHE=1)', () => {
  // the first request: system 4000 bytes + its user block 400 = 1100 tokens, both blocks breakpoints
  const FIRST = anthropicRequest([user('u', 400, true)])
  it.each([
    {
      name: "reads the first request's prefix and writes the new blocks up to the last breakpoint",
      second: anthropicRequest([user('u', 400), assistant(400), user('v', 400, true)]),
      billed: { cache_read_input_tokens: 1100, cache_creation_input_tokens: 200, input_tokens: 0 },
    },
    {
      name: 'bills what follows the last breakpoint as input, neither read nor written',
      second: anthropicRequest([user('u', 400), assistant(400, true), user('v', 400)]),
      billed: { cache_read_input_tokens: 1100, cache_creation_input_tokens: 100, input_tokens: 100 },
    },
    {
      name: 'reads only a prefix that ends where the first request cached one (here: after the system block)',
      second: anthropicRequest([user('w', 400, true)]),
      billed: { cache_read_input_tokens: 1000, cache_creation_input_tokens: 100, input_tokens: 0 },
    },
  ])('$name', async ({ second, billed }) => {
    const server = await mock()
    const first = await post(server, 'anthropic', FIRST)
    expect(first).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 1100, input_tokens: 0 })
    expect(await post(server, 'anthropic', second)).toMatchObject({
      ...billed,
      output_tokens: 10,
      cache_creation: { ephemeral_5m_input_tokens: billed.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
    })
  })

  it('caches nothing for a request without cache_control: the same prompt again is all input', async () => {
    const server = await mock()
    const plain = anthropicRequest([user('u', 400)], false) // 400 bytes: 100 tokens
    await post(server, 'anthropic', plain)
    expect(await post(server, 'anthropic', plain)).toMatchObject({
      input_tokens: 100,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    })
  })

  it('writes each billed usage, as sent, to MOCK_BILL_FILE', async () => {
    const billFile = join(tempDir('pl-mock-bill-'), 'billed.jsonl')
    const logged = await mock({ MOCK_BILL_CACHE: '1', MOCK_BILL_FILE: billFile })
    const usage = await post(logged, 'anthropic', FIRST)
    const lines = readFileSync(billFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines).toEqual([{ n: expect.any(Number), api: 'anthropic', model: SONNET, usage }])
  })
})

describe('the warm window', () => {
  const prompt = [item('a', 4000)]
  it.each([
    { name: 'a prefix read 299 s after it was written is cached', gaps: [299], cached: 1000 },
    { name: 'a prefix read 301 s after it was written is billed fresh', gaps: [301], cached: 0 },
    { name: 'a read refreshes the window: 200 s, then 250 s more, still cached', gaps: [200, 250], cached: 1000 },
  ])('$name', ({ gaps, cached }) => {
    let now = 0
    const billing = createCacheBilling({ ttlS: 300, now: () => now })
    billing.bill('openai', 'gpt-5.5', openaiRequest(prompt))
    let last: { cache_read: number } | null = null
    for (const gap of gaps) {
      now += gap * 1000
      last = billing.bill('openai', 'gpt-5.5', openaiRequest(prompt))
    }
    expect(last?.cache_read).toBe(cached)
  })
})
