#!/usr/bin/env node
// The built-in stub reviewer of `pair-loop demo`: like a real reviewer it reads the prompt and the repository
// (its working directory), requests changes while the off-by-one is still there, and approves once it is fixed.
// It answers as `claude -p --output-format json` does, reporting its usage (about 4 bytes a token) under the model
// named by its first argument, at no cost, so the demo's budget has every call measured.
import { readFileSync } from 'node:fs'
import { text } from 'node:stream/consumers'

// no top-level await: Node's build of this file is CommonJS
void text(process.stdin).then(answer) // the prompt: task, diff and conversation

function answer(prompt: string): void {
  const model = process.argv[2] || 'pair-loop-demo-stub'
  const stillBroken = readFileSync('sum.js', 'utf8').includes('i < values.length - 1')

  const review = stillBroken
    ? [
        'The new test is welcome, but the bug it describes is still there.',
        '',
        '1. [bug/major] sum.js:3 — the loop stops at `values.length - 1`, so the last value is never added; loop to `values.length`',
        '2. [tests/minor] sum.test.js:4 — also cover the empty list (expect 0)',
        '',
        'VERDICT: CHANGES_REQUESTED',
        '',
      ].join('\n')
    : 'The loop now visits every value and both cases are tested.\n\nVERDICT: APPROVED\n'

  const tokens = (words: string) => Math.ceil(Buffer.byteLength(words) / 4)
  const usage = { input_tokens: tokens(prompt), output_tokens: tokens(review) }
  process.stdout.write(
    `${JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: review,
      total_cost_usd: 0,
      usage,
      modelUsage: { [model]: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, costUSD: 0 } },
    })}\n`,
  )
}
