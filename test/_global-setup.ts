// vitest runs the built CLI, as users get it: build dist/ first when any source is newer.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

export default async function setup() {
  const built = join('dist', 'pair-loop.mjs')
  const sources = Math.max(newest('lib'), newest('scripts'))
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return
  const { build } = await import('unbuild')
  await build(process.cwd(), false)
}
