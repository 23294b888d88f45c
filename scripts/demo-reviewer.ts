#!/usr/bin/env node
// The built-in stub reviewer of `pair-loop demo`: like a real reviewer it reads the prompt and the repository
// (its working directory), requests changes while the off-by-one is still there, and approves once it is fixed.
import { readFileSync } from 'node:fs'
import { text } from 'node:stream/consumers'

await text(process.stdin) // the prompt: task, diff and conversation
const stillBroken = readFileSync('sum.js', 'utf8').includes('i < values.length - 1')

if (stillBroken) {
  process.stdout.write(
    [
      'The new test is welcome, but the bug it describes is still there.',
      '',
      '1. [bug/major] sum.js:3 — the loop stops at `values.length - 1`, so the last value is never added; loop to `values.length`',
      '2. [tests/minor] sum.test.js:4 — also cover the empty list (expect 0)',
      '',
      'VERDICT: CHANGES_REQUESTED',
      '',
    ].join('\n'),
  )
} else {
  process.stdout.write('The loop now visits every value and both cases are tested.\n\nVERDICT: APPROVED\n')
}
