import { readdirSync } from 'node:fs'
import { defineBuildConfig } from 'unbuild'

// One dist/<command>.mjs per script (each a bin), shared lib code split into dist/shared/.
const scripts = readdirSync('scripts').filter((name) => name.endsWith('.ts')).map((name) => name.slice(0, -3))

export default defineBuildConfig({
  entries: scripts.map((name) => ({ input: `scripts/${name}`, name })),
  outDir: 'dist',
  declaration: false,
  clean: true,
  rollup: { emitCJS: false, esbuild: { target: 'node20' } },
})
