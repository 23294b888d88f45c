#!/usr/bin/env node
'use strict'
// `pair-loop`: the built CLI in dist/. In a clone where `npm ci` has not run yet, `npx pair-loop` gets here before
// anything is built: one line saying what to run, instead of npm's silent exit 127. Plain JavaScript: it must run
// before the TypeScript is built and before any dependency is installed.
const { existsSync } = require('node:fs')
const { join } = require('node:path')

const built = join(__dirname, '..', 'dist', 'pair-loop.cjs')
if (existsSync(built)) require(built).runMain()
else {
  process.stderr.write(
    'pair-loop: not built yet: run `npm ci` in this clone first (it installs the dependencies and builds dist/), then `npx pair-loop demo`\n',
  )
  process.exitCode = 127 // what a shell answers for a command it cannot run
}
