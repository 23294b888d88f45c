// The order test files start in: longest first, so the long ones do not start last and leave a worker alone at the end;
// and no more than one file that mostly waits among any three in a row, so that three workers on two cores keep both
// busy (the three longest files all mostly wait: started together, they kept 1.26 cores busy for their first 30 s).
// vitest orders by the durations it kept from the last run (node_modules/.vite); a fresh clone has none and would
// order by file size, so test/durations.json (vitest's own figures from a whole run, in ms) stands in for them.
// Refresh it after a run: node -e "$(sed -n 's/^\/\/ refresh: //p' test/_sequencer.ts)"
// refresh: const fs=require('fs');const d='node_modules/.vite/vitest/';const r=JSON.parse(fs.readFileSync(d+fs.readdirSync(d)[0]+'/results.json')).results;fs.writeFileSync('test/durations.json',JSON.stringify(Object.fromEntries(r.filter(([k])=>fs.existsSync(k.slice(1))).sort((a,b)=>b[1].duration-a[1].duration).map(([k,v])=>[k.replace(/^:/,''),Math.round(v.duration)])),null,2)+'\n')
import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const KEPT: Record<string, number> = JSON.parse(readFileSync(join(ROOT, 'test', 'durations.json'), 'utf8'))

/**
 * Files that spend most of their time waiting on processes they started and on timers: run alone (`vitest run <file>`)
 * each used under half a core above vitest's own start (crash 9 s of CPU in 30 s, signals 4.6 in 30, review-worker 6.8
 * in 26, reviewer-process 3.7 in 15, reliability/reviewer-faults 6.4 in 13.5, gh-claims 3.2 in 10, demo 4.3 in 10.6).
 */
const WAITING = new Set([
  'test/reliability/crash.test.ts',
  'test/signals.test.ts',
  'test/review-worker.test.ts',
  'test/reviewer-process.test.ts',
  'test/reliability/reviewer-faults.test.ts',
  'test/gh-claims.test.ts',
  'test/demo.test.ts',
])

/** Two busy files, then one that waits, each list longest first; whichever runs out, the other goes on alone. */
function interleave<T>(busy: T[], waiting: T[]): T[] {
  const order: T[] = []
  for (let b = 0, w = 0; b < busy.length || w < waiting.length; ) {
    for (let n = 0; n < 2 && b < busy.length; n++) order.push(busy[b++]!)
    if (w < waiting.length) order.push(waiting[w++]!)
  }
  return order
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const file = (spec: TestSpecification) => relative(ROOT, spec.moduleId)
    // this checkout's last run first, then the kept figures; a file neither knows runs first, as vitest does
    const duration = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${file(spec)}`)?.duration ?? KEPT[file(spec)] ?? Infinity
    const longestFirst = [...files].sort((a, b) => duration(b) - duration(a))
    return interleave(
      longestFirst.filter((spec) => !WAITING.has(file(spec))),
      longestFirst.filter((spec) => WAITING.has(file(spec))),
    )
  }
}
