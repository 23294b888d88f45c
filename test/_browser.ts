// Headless Chromium for the browser tests: Debian's build driven by playwright-core (never a browser download), and
// the processes it started, so a test can check none outlives it.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
]

/** Whether the browser tests can run here; under CI=true they must (a missing browser fails them, never skips). */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true'

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`)
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 })
}

/** The parent of every process now running, from /proc (Linux). */
function parents(): Map<number, number> {
  const map = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {} // gone while we looked
  }
  return map
}

/** The Chromium processes descended from this one (the browser, its zygotes, renderers and utilities). */
export function chromiumDescendants(root = process.pid): number[] {
  const tree = parents()
  const found: number[] = []
  const queue = [root]
  while (queue.length) {
    const parent = queue.shift()!
    for (const [pid, ppid] of tree) {
      if (ppid !== parent) continue
      queue.push(pid)
      try {
        if (/chrom/i.test(readFileSync(`/proc/${pid}/comm`, 'utf8'))) found.push(pid)
      } catch {}
    }
  }
  return found
}
