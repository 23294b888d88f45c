#!/usr/bin/env node
'use strict'
// npm's `prepare`: builds dist/ with unbuild. npm runs it on `npm ci` in a clone, and also on `npx pair-loop` in a
// clone before `npm ci`, where unbuild is not installed: then it builds nothing and succeeds, so that npx goes on to
// run bin/pair-loop.cjs, which says what to run (a failing prepare would end npx with a silent exit 127).
// A dist/ newer than every source is left alone: `npm install -g .` runs prepare again in the clone, and rebuilding
// there would swap dist/ out from under whatever runs from the clone at that moment.
const { existsSync, readdirSync, statSync } = require('node:fs')
const { join } = require('node:path')
const { spawnSync } = require('node:child_process')

const root = join(__dirname, '..')
const unbuild = join(root, 'node_modules', 'unbuild', 'dist', 'cli.mjs')
if (!existsSync(unbuild)) process.exit(0)
if (upToDate()) process.exit(0)
const built = spawnSync(process.execPath, [unbuild], { cwd: root, stdio: 'inherit' })
process.exit(built.status ?? 70)

function upToDate() {
  const built = join(root, 'dist', 'pair-loop.cjs')
  if (!existsSync(built)) return false
  const sources = [join(root, 'build.config.ts'), join(root, 'package.json')].map((file) => statSync(file).mtimeMs)
  return statSync(built).mtimeMs >= Math.max(newest(join(root, 'lib')), newest(join(root, 'scripts')), ...sources)
}

function newest(dir) {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}
