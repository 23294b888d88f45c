#!/usr/bin/env node
// A zero-dependency mock of the three model APIs the real reviewer CLIs call, on 127.0.0.1:
//   Anthropic Messages API (Claude Code): POST …/messages (SSE or JSON), POST …/messages/count_tokens
//   OpenAI Responses API (Codex CLI):      POST …/responses (SSE or JSON)
//   Gemini API (Gemini CLI):               POST …/models/<model>:generateContent (JSON),
//                                          POST …/models/<model>:streamGenerateContent?alt=sse (SSE)
//   GET …/models → empty list; GET/HEAD / and /health → 200 (Claude Code's pre-connect probe); else 404.
//
// Environment:
//   MOCK_PORT        port to bind (default 0 = any free port)
//   MOCK_PORT_FILE   the chosen port is written here once listening (atomically)
//   MOCK_LOG_FILE    one JSON line per request is appended here (written when the request arrives); a model
//                    request's line has `offered`: the tools, sandbox, added folders, instruction files and hook
//                    output the CLI put in it (see offered() below)
//   MOCK_LOG_STDERR  "1" → also log each request line to stderr
//   MOCK_DUMP_DIR    each raw request body is saved as <n>.json here
//   MOCK_SCRIPT_FILE a JSON array of replies, consumed in order: each request takes (and removes from the file)
//                    the first entry whose `api` is absent or matches ("anthropic" | "openai" | "gemini"). Empty or
//                    missing → the default reply. Entry fields, all optional:
//                      text     reply text (default: MOCK_REPLY_TEXT or a review ending in VERDICT: APPROVED)
//                      blocks   array of texts: several content blocks (Anthropic) / message items (OpenAI)
//                      usage    overrides, e.g. {"input_tokens":1,"output_tokens":2} (Anthropic names, or the
//                               Responses names / flat cached_tokens, cache_write_tokens, reasoning_tokens, or the
//                               Gemini usageMetadata names: promptTokenCount, candidatesTokenCount, …)
//                      status   HTTP status to fail with (400, 429, 500, 529 …) and `error` its message
//                      delay    ms to wait before answering at all
//                      stall    ms to stall after the first stream event, or true = never finish
//                      drop     true = destroy the connection after the first stream event
//                      label    echoed in the request log
//                      structured  the answer to a request that asks for structured output (Claude Code's
//                               StructuredOutput tool → a tool_use block after the text; Codex's text.format
//                               json_schema and Gemini's generationConfig.responseJsonSchema → the final message, as
//                               JSON text, or this string as is); false = answer
//                               in text only; absent = read from the text (its last VERDICT line and grammar findings)
//                      tool     {name, input}: the model calls this tool (Anthropic: a tool_use block after the text,
//                               stop_reason tool_use; Gemini: a functionCall part after the text),
//                               e.g. {"name":"Bash","input":{"command":"pair-loop review"}}; with input_from
//                               {key, patterns, suffix}, input[key] is read from the request (toolFor)
//                      model    (gemini) answer only a request for this model; requests for other models (Gemini CLI's
//                               router and its side calls) take the default reply and leave the entry in the queue
//                      call     an output item after the text (OpenAI Responses: Codex runs it), e.g.
//                               {"type":"function_call","name":"exec_command","arguments":{"cmd":"ls"}},
//                               {"type":"tool_search_call","arguments":{"query":"pair-loop"}} (Codex's deferred tools),
//                               {"type":"function_call","namespace":"mcp__pair-loop","name":"start","arguments":{…}};
//                               id, call_id and status are filled in, an object `arguments` of a function_call is sent
//                               as its JSON text
//                      repeat_while  a string: the entry answers every request whose latest tool result contains it,
//                               staying first in the queue; the first request whose latest tool result does not
//                               contain it drops the entry and takes the next one (a coder polling `review`)
//   MOCK_REPLY_TEXT  the default reply text
//   MOCK_PARENT_PID  stop when this process is gone;  MOCK_MAX_LIFETIME_S  stop after this many seconds
//   MOCK_BILL_CACHE  "1" → Anthropic and OpenAI requests are billed as the providers bill prompt caching, not with the
//                    fixed usage below: input tokens counted from the request body, the longest prefix this server
//                    saw within the warm window billed as cache reads (Anthropic `cache_read_input_tokens`, the rest
//                    up to its last `cache_control` breakpoint as `cache_creation_input_tokens`; OpenAI
//                    `input_tokens_details.cached_tokens`, within `input_tokens`), output tokens from the reply text.
//                    How it decides (tokenizer, blocks, warm window, what is not modelled): mock-billing.mjs's header.
//                    A script entry's `usage` still overrides field by field. Gemini keeps its fixed usage.
//   MOCK_CACHE_TTL_S the warm window of MOCK_BILL_CACHE, in seconds (default 300; decimals allowed)
//   MOCK_BILL_FILE   with MOCK_BILL_CACHE, one JSON line per billed request is appended here: {n, api, model, usage},
//                    the usage exactly as sent
// Stops on SIGTERM / SIGINT (open connections are closed).
import { appendFileSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import * as zlib from 'node:zlib'
import { anthropicBilled, createCacheBilling, openaiBilled, outputTokens } from './mock-billing.mjs'

const env = process.env
const DEFAULT_TEXT =
  env.MOCK_REPLY_TEXT ??
  'I read the task and the diff.\nNo problems found: the change does what the task asks.\n\nVERDICT: APPROVED'

export const ANTHROPIC_USAGE = {
  input_tokens: 1234,
  cache_creation_input_tokens: 789,
  cache_read_input_tokens: 4321,
  output_tokens: 56,
  cache_creation: { ephemeral_5m_input_tokens: 489, ephemeral_1h_input_tokens: 300 },
}
export const OPENAI_USAGE = {
  input_tokens: 2345,
  input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 256 },
  output_tokens: 67,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 2412,
}
/** The Gemini API's usageMetadata: cached ⊂ prompt; thoughts are billed as output beside candidates; total = all. */
export const GEMINI_USAGE = {
  promptTokenCount: 3456,
  candidatesTokenCount: 78,
  cachedContentTokenCount: 2048,
  thoughtsTokenCount: 34,
  totalTokenCount: 3568,
}

const billing = env.MOCK_BILL_CACHE === '1' ? createCacheBilling({ ttlS: Number(env.MOCK_CACHE_TTL_S || 300) }) : null

/**
 * The usage of an answered request: the fixed usage, or (MOCK_BILL_CACHE) what caching bills for its body and reply
 * texts; a script entry's `usage` overrides either. Billed usage is recorded in MOCK_BILL_FILE.
 */
function usageFor(api, n, { body, model, texts, overrides }) {
  const bill = billing?.bill(api, model, body)
  const billed = !bill
    ? {}
    : api === 'anthropic'
      ? anthropicBilled(bill, outputTokens(texts))
      : openaiBilled(bill, outputTokens(texts))
  const usage =
    api === 'anthropic' ? anthropicUsage({ ...billed, ...overrides }) : openaiUsage({ ...billed, ...overrides })
  if (bill && env.MOCK_BILL_FILE) appendFileSync(env.MOCK_BILL_FILE, `${JSON.stringify({ n, api, model, usage })}\n`)
  return usage
}

const RUN = randomBytes(4).toString('hex')
let counter = 0
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function log(entry) {
  const line = `${JSON.stringify(entry)}\n`
  if (env.MOCK_LOG_FILE) appendFileSync(env.MOCK_LOG_FILE, line)
  if (env.MOCK_LOG_STDERR === '1') process.stderr.write(line)
}

/** Take the first script entry meant for this API out of the script file (a `repeat_while` entry stays while it holds). */
function nextScripted(api, body, model = null) {
  const file = env.MOCK_SCRIPT_FILE
  if (!file) return {}
  let queue
  try {
    queue = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return {}
  }
  if (!Array.isArray(queue)) return {}
  for (;;) {
    const index = queue.findIndex(
      (entry) => entry && (!entry.api || entry.api === api) && (!entry.model || entry.model === model),
    )
    if (index < 0) {
      saveQueue(file, queue)
      return {}
    }
    const entry = queue[index]
    if (typeof entry.repeat_while === 'string' && lastToolResult(body).includes(entry.repeat_while)) {
      saveQueue(file, queue)
      return entry
    }
    queue.splice(index, 1)
    if (typeof entry.repeat_while === 'string') continue // its condition is over: the next entry answers
    saveQueue(file, queue)
    return entry
  }
}

function saveQueue(file, queue) {
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(queue, null, 2)}\n`)
  renameSync(tmp, file)
}

/** The text of the latest tool result in an Anthropic request ('' when it has none). */
function lastToolResult(body) {
  const results = (Array.isArray(body?.messages) ? body.messages : [])
    .flatMap((message) => (Array.isArray(message?.content) ? message.content : []))
    .filter((block) => block?.type === 'tool_result')
  const content = results.at(-1)?.content
  if (typeof content === 'string') return content
  return Array.isArray(content) ? content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('') : ''
}

function anthropicUsage(overrides = {}) {
  const usage = { ...ANTHROPIC_USAGE, cache_creation: { ...ANTHROPIC_USAGE.cache_creation }, ...overrides }
  if (overrides.cache_creation_input_tokens !== undefined && !overrides.cache_creation) {
    // keep the split consistent with the total (789 → 489 + 300)
    const total = overrides.cache_creation_input_tokens
    const hour = Math.min(300, Math.floor(total / 2))
    usage.cache_creation = { ephemeral_5m_input_tokens: total - hour, ephemeral_1h_input_tokens: hour }
  } else if (overrides.cache_creation && overrides.cache_creation_input_tokens === undefined) {
    usage.cache_creation_input_tokens =
      (usage.cache_creation.ephemeral_5m_input_tokens ?? 0) + (usage.cache_creation.ephemeral_1h_input_tokens ?? 0)
  }
  return usage
}

function openaiUsage(overrides = {}) {
  const o = { ...overrides }
  const usage = {
    input_tokens: o.input_tokens ?? OPENAI_USAGE.input_tokens,
    input_tokens_details: {
      cached_tokens:
        o.cached_tokens ?? o.input_tokens_details?.cached_tokens ?? OPENAI_USAGE.input_tokens_details.cached_tokens,
      cache_write_tokens:
        o.cache_write_tokens ??
        o.input_tokens_details?.cache_write_tokens ??
        OPENAI_USAGE.input_tokens_details.cache_write_tokens,
    },
    output_tokens: o.output_tokens ?? OPENAI_USAGE.output_tokens,
    output_tokens_details: {
      reasoning_tokens:
        o.reasoning_tokens ??
        o.output_tokens_details?.reasoning_tokens ??
        OPENAI_USAGE.output_tokens_details.reasoning_tokens,
    },
  }
  usage.total_tokens = o.total_tokens ?? usage.input_tokens + usage.output_tokens
  return usage
}

const STRUCTURED_TOOL = 'StructuredOutput'

/** Claude Code asks for a structured final answer through a tool of its own, `StructuredOutput`. */
function anthropicWantsStructured(body) {
  return Array.isArray(body?.tools) && body.tools.some((tool) => tool?.name === STRUCTURED_TOOL)
}

/** Codex asks for a structured final answer with the Responses API's `text.format` JSON schema. */
function openaiWantsStructured(body) {
  return body?.text?.format?.type === 'json_schema'
}

/**
 * The structured answer for a request that asked for one: the entry's `structured` object as given, none when it
 * is false (the model answers in text only), else one read from the reply text (last VERDICT line, grammar findings).
 */
function structuredAnswer(entry, text) {
  if (entry.structured === false) return null
  if (entry.structured !== undefined) return entry.structured
  const verdicts = [...text.matchAll(/^\s*VERDICT:\s*(APPROVED|CHANGES_REQUESTED)\s*$/gm)]
  if (!verdicts.length) return null // no verdict in the text: the model answers in text only
  const findings = []
  for (const match of text.matchAll(
    /^\s*\d+\.\s+\[([^\]/]+)(?:\/([a-z]+))?\]\s*(?:(\S+?):(\d+)(?:-(\d+))?\s+—\s+)?(.*)$/gm,
  )) {
    const [, category, severity, path, start, end, rest] = match
    findings.push({
      category,
      severity: severity ?? null,
      path: path ?? null,
      line_start: start ? Number(start) : null,
      line_end: start ? Number(end ?? start) : null,
      text: rest,
    })
  }
  return {
    verdict: verdicts.at(-1)[1],
    summary: text.split('\n')[0] ?? '',
    findings,
  }
}

/** Split a text into per-line deltas (each keeps its newline). */
function deltas(text) {
  const parts = text.match(/[^\n]*\n|[^\n]+$/g) ?? ['']
  return parts.length ? parts : ['']
}

function decodeBody(raw, encoding) {
  try {
    if (encoding === 'gzip') return zlib.gunzipSync(raw)
    if (encoding === 'deflate') return zlib.inflateSync(raw)
    if (encoding === 'br') return zlib.brotliDecompressSync(raw)
    if (encoding === 'zstd' && zlib.zstdDecompressSync) return zlib.zstdDecompressSync(raw)
  } catch {}
  return raw
}

function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

function anthropicError(status, message) {
  const type =
    {
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'request_too_large',
      429: 'rate_limit_error',
      529: 'overloaded_error',
    }[status] ?? 'api_error'
  return { type: 'error', error: { type, message: message ?? `mock ${type} (HTTP ${status})` } }
}

function openaiError(status, message) {
  const type =
    { 400: 'invalid_request_error', 401: 'invalid_api_key', 429: 'rate_limit_exceeded' }[status] ?? 'server_error'
  return { error: { message: message ?? `mock ${type} (HTTP ${status})`, type, param: null, code: type } }
}

/** Write SSE events; honours `stall` / `drop` after the first event. Returns false if the stream was cut. */
async function streamEvents(_req, res, events, entry) {
  let closed = false
  res.on('close', () => (closed = true))
  for (let i = 0; i < events.length; i++) {
    if (closed) return false
    const [name, data] = events[i]
    res.write(`${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
    if (i === 0 && entry.drop) {
      await sleep(50) // let the headers and the first event reach the client, then cut mid-stream
      res.socket?.destroy()
      return false
    }
    if (i === 0 && entry.stall) {
      if (entry.stall === true) {
        await new Promise((r) => res.on('close', r))
        return false
      }
      await sleep(Number(entry.stall))
    }
  }
  res.end()
  return true
}

async function anthropicMessages(req, res, body, entry, n) {
  const requestId = `req_mock_${RUN}_${n}`
  if (entry.status)
    return sendJson(res, entry.status, anthropicError(entry.status, entry.error), { 'request-id': requestId })
  const model = body?.model ?? 'claude-sonnet-4-5-20250929'
  const texts =
    Array.isArray(entry.blocks) && entry.blocks.length ? entry.blocks.map(String) : [entry.text ?? DEFAULT_TEXT]
  const id = `msg_mock_${RUN}_${n}`
  const scriptedTool = entry.tool && typeof entry.tool.name === 'string' ? toolFor(entry.tool, body) : null
  const structured = scriptedTool
    ? null
    : anthropicWantsStructured(body)
      ? structuredAnswer(entry, texts.join('\n'))
      : null
  // one tool call at most: the scripted tool (a coder's Bash), else the structured answer's StructuredOutput
  const call = scriptedTool ?? (structured ? { name: STRUCTURED_TOOL, input: structured } : null)
  const toolId = `toolu_mock_${RUN}_${n}`
  const stopReason = call ? 'tool_use' : 'end_turn'
  const usage = usageFor('anthropic', n, {
    body,
    model,
    texts: call ? [...texts, JSON.stringify(call.input ?? {})] : texts,
    overrides: entry.usage,
  })
  if (body?.stream === false) {
    const content = texts.map((text) => ({ type: 'text', text }))
    if (call) content.push({ type: 'tool_use', id: toolId, name: call.name, input: call.input ?? {} })
    return sendJson(
      res,
      200,
      { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage },
      { 'request-id': requestId },
    )
  }
  const startUsage = { ...usage, output_tokens: 1 }
  const events = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: startUsage,
        },
      },
    ],
  ]
  texts.forEach((text, index) => {
    events.push([
      'content_block_start',
      { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    ])
    if (index === 0) events.push(['ping', { type: 'ping' }])
    for (const piece of deltas(text)) {
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
      ])
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }])
  })
  if (call) {
    // a tool call: Claude Code's StructuredOutput with the object as input, or the scripted tool (a coder's Bash)
    const index = texts.length
    events.push([
      'content_block_start',
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} },
      },
    ])
    events.push([
      'content_block_delta',
      {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input ?? {}) },
      },
    ])
    events.push(['content_block_stop', { type: 'content_block_stop', index }])
  }
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  ])
  events.push(['message_stop', { type: 'message_stop' }])
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': requestId,
  })
  await streamEvents(req, res, events, entry)
}

async function openaiResponses(req, res, body, entry, n) {
  if (entry.status)
    return sendJson(res, entry.status, openaiError(entry.status, entry.error), {
      'x-request-id': `req_mock_${RUN}_${n}`,
    })
  const model = body?.model ?? 'gpt-5.5'
  const texts =
    Array.isArray(entry.blocks) && entry.blocks.length ? entry.blocks.map(String) : [entry.text ?? DEFAULT_TEXT]
  const respId = `resp_mock_${RUN}_${n}`
  const createdAt = Math.floor(Date.now() / 1000)
  const structured = openaiWantsStructured(body) ? structuredAnswer(entry, texts.join('\n')) : null
  if (structured) {
    // Codex's structured output: the final message is the JSON object as text (free text before it only when scripted)
    const answer = typeof structured === 'string' ? structured : JSON.stringify(structured)
    texts.splice(0, texts.length, ...(entry.structured !== undefined && entry.text !== undefined ? texts : []), answer)
  }
  const items = texts.map((text, i) => ({
    id: `msg_mock_${RUN}_${n}_${i}`,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  }))
  const call = scriptedCall(entry.call, n)
  const usage = usageFor('openai', n, {
    body,
    model,
    texts: call ? [...texts, call.arguments ?? ''] : texts,
    overrides: entry.usage,
  })
  const response = (status, output, usageValue) => ({
    id: respId,
    object: 'response',
    created_at: createdAt,
    model,
    status,
    error: null,
    incomplete_details: null,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: usageValue,
  })
  const output = call ? [...items, call] : items
  if (body?.stream === false) return sendJson(res, 200, response('completed', output, usage))
  let seq = 0
  const ev = (type, fields) => [type, { type, sequence_number: seq++, ...fields }]
  const events = [
    ev('response.created', { response: response('in_progress', [], null) }),
    ev('response.in_progress', { response: response('in_progress', [], null) }),
  ]
  items.forEach((item, output_index) => {
    const text = item.content[0].text
    events.push(
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }),
    )
    events.push(
      ev('response.content_part.added', {
        item_id: item.id,
        output_index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    )
    for (const delta of deltas(text)) {
      events.push(
        ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] }),
      )
    }
    events.push(
      ev('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text, logprobs: [] }),
    )
    events.push(
      ev('response.content_part.done', {
        item_id: item.id,
        output_index,
        content_index: 0,
        part: { type: 'output_text', text, annotations: [] },
      }),
    )
    events.push(ev('response.output_item.done', { output_index, item }))
  })
  if (call) {
    const output_index = items.length
    events.push(ev('response.output_item.added', { output_index, item: { ...call, status: 'in_progress' } }))
    events.push(ev('response.output_item.done', { output_index, item: call }))
  }
  events.push(ev('response.completed', { response: response('completed', output, usage) }))
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': `req_mock_${RUN}_${n}`,
  })
  await streamEvents(req, res, events, entry)
}

/** A scripted Responses output item with its ids and status filled in (null when none is scripted). */
function scriptedCall(call, n) {
  if (!call || typeof call.type !== 'string') return null
  const item = { id: `item_mock_${RUN}_${n}`, call_id: `call_mock_${RUN}_${n}`, status: 'completed', ...call }
  if (call.type === 'function_call' && typeof call.arguments !== 'string')
    item.arguments = JSON.stringify(call.arguments ?? {})
  if (call.type === 'tool_search_call') item.execution ??= 'client'
  return item
}

/** Gemini's usageMetadata with overrides; the total follows the parts unless given. */
function geminiUsage(overrides = {}) {
  const usage = { ...GEMINI_USAGE, ...overrides }
  if (overrides.totalTokenCount === undefined)
    usage.totalTokenCount = usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0)
  return usage
}

/** Gemini asks for a structured answer with generationConfig.responseMimeType JSON and a schema. */
function geminiWantsStructured(body) {
  const config = body?.generationConfig
  return Boolean(config && (config.responseJsonSchema || config.responseSchema))
}

function geminiError(status, message) {
  const code =
    { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED' }[status] ??
    'INTERNAL'
  return { error: { code: status, message: message ?? `mock ${code} (HTTP ${status})`, status: code } }
}

/** The model of a Gemini request, from its path (…/models/<model>:generateContent). */
function geminiModel(path) {
  return decodeURIComponent(path.match(/\/models\/([^/:]+):\w+$/)?.[1] ?? '')
}

async function geminiGenerate(req, res, body, entry, n, path) {
  if (entry.status) return sendJson(res, entry.status, geminiError(entry.status, entry.error))
  const model = geminiModel(path) || 'gemini-2.5-pro'
  const texts =
    Array.isArray(entry.blocks) && entry.blocks.length ? entry.blocks.map(String) : [entry.text ?? DEFAULT_TEXT]
  const usage = geminiUsage(entry.usage)
  const scriptedTool = entry.tool && typeof entry.tool.name === 'string' ? toolFor(entry.tool, body) : null
  const structured = !scriptedTool && geminiWantsStructured(body) ? structuredAnswer(entry, texts.join('\n')) : null
  if (structured)
    texts.splice(0, texts.length, typeof structured === 'string' ? structured : JSON.stringify(structured))
  const parts = texts.map((text) => ({ text }))
  const call = scriptedTool ? { functionCall: { name: scriptedTool.name, args: scriptedTool.input ?? {} } } : null
  const candidate = (content, finished) => ({
    content: { role: 'model', parts: content },
    ...(finished ? { finishReason: 'STOP' } : {}),
    index: 0,
  })
  const chunk = (content, finished) => ({
    candidates: [candidate(content, finished)],
    ...(finished ? { usageMetadata: usage } : {}),
    modelVersion: model,
    responseId: `resp_mock_${RUN}_${n}`,
  })
  if (!path.endsWith(':streamGenerateContent')) return sendJson(res, 200, chunk(call ? [...parts, call] : parts, true))
  // the stream: one chunk per line of text, the function call and the usage in the last one
  const pieces = texts.flatMap((text) => deltas(text))
  const events = pieces.map((piece, i) => [
    null,
    chunk(i === pieces.length - 1 && call ? [{ text: piece }, call] : [{ text: piece }], i === pieces.length - 1),
  ])
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  await streamEvents(req, res, events, entry)
}

/**
 * The scripted tool call, its `input_from` filled from the request: `{key, patterns, suffix}` sets input[key] to the
 * first group of the first pattern (a regular expression, tried in order) any string of the request matches, then
 * `suffix` — a reviewer's Read pointed at the folder its prompt names, whatever that folder is.
 */
function toolFor(tool, body) {
  const from = tool.input_from
  if (!from) return tool
  const strings = stringsIn(body)
  for (const pattern of from.patterns ?? []) {
    const found = strings.map((text) => new RegExp(pattern).exec(text)).find(Boolean)
    if (found) return { ...tool, input: { ...(tool.input ?? {}), [from.key]: `${found[1]}${from.suffix ?? ''}` } }
  }
  return tool
}

/** Every string in a request body, however deep (system prompt, instructions, tools, messages). */
function stringsIn(value, into = []) {
  if (typeof value === 'string') into.push(value)
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into)
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into)
  return into
}

/**
 * What a model request offered the model, as the CLI wrote it into the request (the e2e tests' positive controls):
 *   tools              the tool names (Anthropic `name`; Responses `name`, else `type`; Gemini's function
 *                      declarations), sorted
 *   sandbox            Codex's sandbox mode, from its permissions instructions ("`sandbox_mode` is `read-only`")
 *   added_dirs         Claude Code's "Additional working directories" (its --add-dir folders)
 *   instruction_files  the files Claude Code loaded as instructions ("Contents of <path> (…):"), CLAUDE.md and kin
 *   agents_md          the text of each AGENTS.md block Codex sent ("# AGENTS.md instructions …<INSTRUCTIONS>…")
 *   hook_output        what Claude Code's hooks said ("SessionStart:startup hook success: <output>")
 */
export function offered(api, body) {
  if (!api || !body || typeof body !== 'object') return null
  const texts = stringsIn(
    api === 'anthropic'
      ? [body.system, body.messages]
      : api === 'gemini'
        ? [body.systemInstruction, body.contents]
        : [body.instructions, body.input],
  )
  const all = (pattern) => texts.flatMap((text) => [...text.matchAll(pattern)])
  // its environment list: " - Additional working directories:" then one "  - <dir>" line (deeper) per folder
  const addedBlocks = all(/Additional working directories:\n((?:[ \t]{2,}- .*\n?)+)/g)
  return {
    tools: (Array.isArray(body.tools) ? body.tools : [])
      // Gemini nests its tools: [{functionDeclarations: [{name}, …]}]
      .flatMap((tool) => (Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : [tool]))
      .map((tool) => tool?.name ?? tool?.type)
      .filter((name) => typeof name === 'string')
      .sort(),
    sandbox: all(/`sandbox_mode` is `([^`]+)`/g)[0]?.[1] ?? null,
    added_dirs: addedBlocks.flatMap((match) =>
      match[1].split('\n').flatMap((line) => line.match(/^\s+- (.+)$/)?.[1] ?? []),
    ),
    instruction_files: [...new Set(all(/^Contents of (\/.*?) \([^\n]*\):/gm).map((match) => match[1]))],
    agents_md: all(/# AGENTS\.md instructions[^\n]*\n+<INSTRUCTIONS>\n([\s\S]*?)<\/INSTRUCTIONS>/g).map((m) => m[1]),
    hook_output: all(/^\w+(?::\w+)? hook success: (.*)$/gm).map((match) => match[1]),
  }
}

function authKind(headers) {
  if (headers['x-api-key']) return 'x-api-key'
  if (headers['x-goog-api-key']) return 'x-goog-api-key'
  if (/^bearer /i.test(headers.authorization ?? '')) return 'bearer'
  return 'none'
}

async function handle(req, res) {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  const raw = decodeBody(Buffer.concat(chunks), req.headers['content-encoding'])
  const path = (req.url ?? '/').split('?')[0]
  const n = ++counter
  let body
  try {
    body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined
  } catch {
    body = undefined
  }
  const api =
    req.method === 'POST' && path.endsWith('/messages')
      ? 'anthropic'
      : req.method === 'POST' && path.endsWith('/responses')
        ? 'openai'
        : req.method === 'POST' && /\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.test(path)
          ? 'gemini'
          : null
  const model = api === 'gemini' ? geminiModel(path) : (body?.model ?? null)
  const entry = api ? nextScripted(api, body, model) : {}
  let bodyFile
  if (env.MOCK_DUMP_DIR && raw.length) {
    mkdirSync(env.MOCK_DUMP_DIR, { recursive: true })
    bodyFile = join(env.MOCK_DUMP_DIR, `${n}.json`)
    writeFileSync(bodyFile, raw)
  }
  log({
    n,
    time: new Date().toISOString(),
    method: req.method,
    path,
    url: req.url,
    api,
    bytes: raw.length,
    model,
    stream: api === 'gemini' ? path.endsWith(':streamGenerateContent') : (body?.stream ?? null),
    max_tokens: body?.max_tokens ?? null,
    user_agent: req.headers['user-agent'] ?? null,
    auth: authKind(req.headers),
    scripted: Object.keys(entry).length > 0,
    label: entry.label ?? null,
    // the request asked for a structured final answer (Claude Code's StructuredOutput tool, Codex's text.format)
    wants_structured: api
      ? { anthropic: anthropicWantsStructured, openai: openaiWantsStructured, gemini: geminiWantsStructured }[api](body)
      : null,
    status: entry.status ?? 200,
    offered: offered(api, body),
    body_file: bodyFile ?? null,
  })
  if (entry.delay) await sleep(Number(entry.delay))

  if ((req.method === 'GET' || req.method === 'HEAD') && (path === '/' || path === '/health')) {
    res.writeHead(200, { 'content-type': 'text/plain' })
    return res.end(req.method === 'HEAD' ? undefined : 'ok\n')
  }
  if (req.method === 'GET' && path.endsWith('/models')) return sendJson(res, 200, { object: 'list', data: [] })
  if (req.method === 'POST' && path.endsWith('/messages/count_tokens'))
    return sendJson(res, 200, { input_tokens: ANTHROPIC_USAGE.input_tokens })
  if (api === 'anthropic') return anthropicMessages(req, res, body, entry, n)
  if (api === 'openai') return openaiResponses(req, res, body, entry, n)
  if (api === 'gemini') return geminiGenerate(req, res, body, entry, n, path)
  sendJson(res, 404, anthropicError(404, `mock: no route for ${req.method} ${path}`))
}

// Importing this module (for the usage constants) does not start a server; running it does.
function runAsScript() {
  try {
    return Boolean(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}
const isMain = runAsScript()
if (isMain) {
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      process.stderr.write(`mock-server: ${error?.stack ?? error}\n`)
      if (!res.headersSent) sendJson(res, 500, anthropicError(500, String(error)))
      else res.destroy()
    })
  })
  server.keepAliveTimeout = 1000

  function stop() {
    server.close(() => process.exit(0))
    server.closeAllConnections?.()
    setTimeout(() => process.exit(0), 500).unref()
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  // Never outlive the test process that started it, nor a generous lifetime.
  const parent = Number(env.MOCK_PARENT_PID || 0)
  if (parent > 0) {
    setInterval(() => {
      try {
        process.kill(parent, 0)
      } catch {
        stop()
      }
    }, 1000).unref()
  }
  if (Number(env.MOCK_MAX_LIFETIME_S) > 0) setTimeout(stop, Number(env.MOCK_MAX_LIFETIME_S) * 1000).unref()

  server.listen(Number(env.MOCK_PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address()
    if (env.MOCK_PORT_FILE) {
      const tmp = `${env.MOCK_PORT_FILE}.tmp`
      writeFileSync(tmp, `${port}\n`)
      renameSync(tmp, env.MOCK_PORT_FILE)
    }
    process.stderr.write(`mock-server: listening on http://127.0.0.1:${port} (pid ${process.pid})\n`)
  })
}
