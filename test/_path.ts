// A PATH without the programs a test needs missing: whatever a machine has installed in /usr/bin or elsewhere (a real
// gh, claude or codex) is never what answers a test's command, and every other program is still found.
import { readdirSync, statSync, symlinkSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { tempDir } from './_helpers.ts'

/**
 * One folder of links to every program on `path` (the first of each name, as a shell finds it) except `missing`:
 * a PATH that finds all the machine has but those.
 */
export function pathWithout(missing: string[], path = process.env.PATH ?? ''): string {
  const bin = tempDir('pl-path-')
  const linked = new Set(missing)
  for (const dir of path.split(delimiter).filter(Boolean)) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue // a PATH entry that does not exist
    }
    for (const name of names) {
      if (linked.has(name)) continue
      try {
        if (statSync(join(dir, name)).isDirectory()) continue
        symlinkSync(join(dir, name), join(bin, name))
        linked.add(name)
      } catch {} // a dangling link: nothing a shell would run either
    }
  }
  return bin
}
