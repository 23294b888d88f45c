import { readdirSync } from 'node:fs'
import { defineBuildConfig } from 'unbuild'

// One dist/<name>.mjs per script: the dispatcher (pair-loop), one per command (each a `pair-loop-<command>` bin)
// and demo-reviewer (demo runs it beside itself). commands.ts is the dispatcher's lazy table, not a program:
// it is bundled into the entries that import it. Shared lib code is split into dist/shared/.
// zx, citty, valibot and proper-lockfile are `dependencies`, so unbuild keeps them external (bundling zx breaks Deno).
const NOT_ENTRIES = new Set(['commands'])
const scripts = readdirSync('scripts')
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.slice(0, -3))
  .filter((name) => !NOT_ENTRIES.has(name))

export default defineBuildConfig({
  entries: scripts.map((name) => ({ input: `scripts/${name}`, name })),
  // tests build into a fresh folder and swap it in whole (test/_build.ts), so runs beside them never see a half-built dist/
  outDir: process.env.PAIR_LOOP_BUILD_OUT_DIR || 'dist',
  declaration: false,
  clean: true,
  rollup: { emitCJS: false, esbuild: { target: 'node20' } },
})
