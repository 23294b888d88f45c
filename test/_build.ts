// dist/ built once and swapped in whole: concurrent test runs never see it half-built or cleaned.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// not from _helpers.ts: the global setup loads this outside any test file, where _helpers.ts cannot register its hooks
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/** Build dist/ when any source is newer than it: into a fresh folder, then renamed over the old one. */
export function ensureBuilt(): void {
  const dist = join(ROOT, 'dist')
  const built = join(dist, 'pair-loop.cjs')
  const sources = Math.max(
    newest(join(ROOT, 'lib')),
    newest(join(ROOT, 'scripts')),
    statSync(join(ROOT, 'build.config.ts')).mtimeMs,
  )
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return
  const fresh = join(ROOT, `.dist-${process.pid}-${Date.now()}`)
  const unbuild = join(ROOT, 'node_modules', 'unbuild', 'dist', 'cli.mjs')
  const out = spawnSync('node', [unbuild], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, PAIR_LOOP_BUILD_OUT_DIR: fresh },
  })
  if (out.status !== 0 || !existsSync(join(fresh, 'pair-loop.cjs'))) {
    rmSync(fresh, { recursive: true, force: true })
    throw new Error(`unbuild failed (exit ${out.status}): ${out.stderr}`)
  }
  const old = `${dist}.old-${process.pid}-${Date.now()}`
  if (existsSync(dist)) renameSync(dist, old)
  renameSync(fresh, dist)
  rmSync(old, { recursive: true, force: true })
}
