// npm drops optional platform packages the registry here does not serve (404) from package-lock.json,
// and `npm ci` then refuses the lock as out of sync. Record them as optional, platform-limited entries
// (npm skips them on other platforms without fetching). Run after any `npm install`.
import { readFileSync, writeFileSync } from 'node:fs'

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8'))
const platform = (name) => {
  const [, os, cpu] = /-(darwin|linux|win32)-(x64|arm64)$/.exec(name) ?? []
  return os ? { cpu: [cpu], os: [os] } : name === 'napi-windows-process-start-time' ? { os: ['win32'] } : {}
}
let added = 0
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = key ? `${key}/node_modules/${name}` : `node_modules/${name}`
    const hoisted = `node_modules/${name}`
    if (lock.packages[base] || lock.packages[hoisted]) continue
    const version = range.replace(/^[~^]/, '')
    lock.packages[hoisted] = { version, ...platform(name), dev: true, license: 'MIT', optional: true }
    added++
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
)
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`fix-lock: ${added} missing optional entries recorded`)
