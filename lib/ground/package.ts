// This package's own folder and package.json, found by walking up from the module: the same from lib/ and
// scripts/ (bun, deno), dist/ and dist/chunks/ (node), and an installed node_modules/pair-loop.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PACKAGE_NAME = 'pair-loop'

export interface PackageJson {
  name?: string
  version?: string
  homepage?: string
  repository?: string | { url?: string }
}

/** The project's web page from package.json (`homepage`, else the `repository` as an https URL), or null: never a guess. */
export function projectUrl(json: PackageJson | undefined): string | null {
  if (json?.homepage) return json.homepage
  const repository = typeof json?.repository === 'string' ? json.repository : json?.repository?.url
  if (!repository) return null
  const shorthand = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(repository)
  if (shorthand) return `https://github.com/${shorthand[1]!.replace(/\.git$/, '')}`
  const url = repository.replace(/^git\+/, '').replace(/\.git$/, '')
  return /^https:\/\//.test(url) ? url : null
}

/** The nearest folder above `moduleUrl` whose package.json is pair-loop's, or null. */
export function packageRoot(moduleUrl: string = import.meta.url): { dir: string; json: PackageJson } | null {
  let dir: string
  try {
    dir = dirname(fileURLToPath(moduleUrl))
  } catch {
    return null
  }
  for (;;) {
    try {
      const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson
      if (json.name === PACKAGE_NAME) return { dir, json }
    } catch {}
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}
