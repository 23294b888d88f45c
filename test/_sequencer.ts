// The order test files start in: longest first, so the long ones do not start last and leave a worker alone at the end.
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

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const duration = (spec: TestSpecification) => {
      const file = relative(ROOT, spec.moduleId)
      // this checkout's last run first, then the kept figures; a file neither knows runs first, as vitest does
      return this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration ?? KEPT[file] ?? Infinity
    }
    return [...files].sort((a, b) => duration(b) - duration(a))
  }
}
