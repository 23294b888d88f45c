#!/usr/bin/env node
'use strict'
// npm's `prepare`: builds dist/ with unbuild. npm runs it on `npm ci` in a clone, and also on `npx pair-loop` in a
// clone before `npm ci`, where unbuild is not installed: then it builds nothing and succeeds, so that npx goes on to
// run bin/pair-loop.cjs, which says what to run (a failing prepare would end npx with a silent exit 127).
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const { spawnSync } = require('node:child_process')

const root = join(__dirname, '..')
const unbuild = join(root, 'node_modules', 'unbuild', 'dist', 'cli.mjs')
if (!existsSync(unbuild)) process.exit(0)
const built = spawnSync(process.execPath, [unbuild], { cwd: root, stdio: 'inherit' })
process.exit(built.status ?? 70)
