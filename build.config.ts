import { readdirSync } from 'node:fs'
import type { OutputOptions } from 'rollup'
import { defineBuildConfig } from 'unbuild'

// One dist/<name>.cjs per script: the dispatcher (pair-loop), one per command (each a `pair-loop-<command>` bin)
// and demo-reviewer (demo runs it beside itself). commands.ts is the dispatcher's lazy table, not a program:
// it is bundled into the entries that import it. Shared lib code is split into dist/shared/.
// zx, citty, valibot and proper-lockfile are `dependencies`, so unbuild keeps them external (bundling zx breaks Deno).
const NOT_ENTRIES = new Set(['commands'])
const scripts = readdirSync('scripts')
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.slice(0, -3))
  .filter((name) => !NOT_ENTRIES.has(name))

// Few, whole chunks load faster than many small ones (each module file costs a resolve, a read and a compile):
// `core` is what every command needs (flags, errors), `lib` the loop's bookkeeping, and the heavy parts that only
// some commands run (the cost ledger, the reviewer call, the exporters) one chunk each. zx and proper-lockfile stay
// lazy imports. status reads the cost snapshot (lib) and loads the ledger (cost) only when the figures are stale.
// The report has a chunk of its own: it imports the ledger (cost), which imports lib, so in lib it would make a cycle
// of chunks (lib ↔ cost), and a cycle of chunks breaks module initialisation order (a `const` read before it is set).
// the Context (lib/ground/context.ts) too: every command reads the outside world through it; and the help (the
// dispatcher imports it: in lib, every command would load lib before its own code)
const CORE = [
  ...['/lib/cli/cli.ts', '/lib/cli/flags.ts', '/lib/cli/sandboxed.ts', '/lib/view/help.ts'],
  ...['/lib/ground/context.ts', '/lib/ground/stdio.ts', '/lib/ground/suggest.ts', '/lib/ground/errors.ts'],
  '/lib/ground/text.ts',
]
// status's cost snapshot, the transcript finders and the frozen transcript environment are light; the grammar's
// finding keys number findings in a move
// the PR phase (lib/pr/) is a chunk of its own for the same reason (its final round imports the reviewer call); only the
// state's schema of it sits in lib, beside the run state that embeds it
const IN_LIB = [
  '/lib/cost/status-snapshot.ts',
  '/lib/agents/locate.ts',
  '/lib/cost/sessions.ts',
  '/lib/cost/gemini-transcript.ts', // sessions.ts finds Gemini sessions with it: in cost it would make a cycle of chunks
  '/lib/cost/transcript-env.ts',
  '/lib/run/grammar.ts',
  '/lib/run/pr-schema.ts',
  '/lib/snapshot/named-only.ts', // the PR body (extra) reads what a review named only: in review it would make a cycle
]
function chunkOf(id: string): string | undefined {
  // valibot and citty are inlined, tree-shaken: a 200 kB module compiled on every start costs more than the check
  if (id.includes('/node_modules/citty/')) return 'core'
  if (id.includes('/node_modules/valibot/')) return 'lib'
  if (CORE.some((path) => id.endsWith(path))) return 'core'
  // `review` starts its worker before it loads the rest of its code; apart from core, since it loads child_process
  // and crypto, which no other command needs at start
  if (id.endsWith('/lib/review/launch.ts')) return 'launch'
  if (IN_LIB.some((path) => id.endsWith(path))) return 'lib'
  if (/\/lib\/view\/text-(view|views|layout|budget|loop)\.ts$/.test(id)) return 'text' // loaded for --text only
  // what only some commands use (gh, skills, the PR body, bodies from files): not compiled by the rest
  if (/\/lib\/(ground\/(gh|skills|body-input|package)|pr\/(body|record))\.ts$/.test(id)) return 'extra'
  // the Stop hook snapshots the tree (lib/snapshot/), whose diff the review shows: in lib they would make a cycle of
  // chunks (lib ↔ review)
  if (id.endsWith('/lib/snapshot/prune.ts')) return 'cost' // the daily prune's (cost/prune.ts): no git, no review
  if (id.endsWith('/lib/snapshot/hash-worker.ts')) return undefined // an entry of its own: in a chunk, it would become it
  if (id.endsWith('/lib/review/stop-hook.ts') || id.includes('/lib/snapshot/')) return 'review'
  // the use-cases (lib/commands/) in no chunk: each is bundled with its command's entry (or shared by the few that
  // use it), so a command compiles its own story and none of the others' (one chunk of them all made `codes` load
  // the reviewer call, the PR phase and the ledger: 2.83× `node -e 0`)
  if (id.includes('/lib/commands/')) return undefined
  const area = /\/lib\/(cost|review|export|report|pr)\//.exec(id)?.[1]
  if (area) return area
  return id.includes('/lib/') ? 'lib' : undefined
}

export default defineBuildConfig({
  // and the snapshot's hashing thread, no program: among the chunks (lib/snapshot/hashing.ts finds it beside them)
  entries: [
    ...scripts.map((name) => ({ input: `scripts/${name}`, name })),
    { input: 'lib/snapshot/hash-worker', name: 'chunks/hash-worker' },
  ],
  // tests build into a fresh folder and swap it in whole (test/_build.ts), so runs beside them never see a half-built dist/
  outDir: process.env.PAIR_LOOP_BUILD_OUT_DIR || 'dist',
  // built aside, unbuild checks package.json's bins against the old dist/: a new command would read as missing
  failOnWarn: !process.env.PAIR_LOOP_BUILD_OUT_DIR,
  declaration: false,
  clean: true,
  // CommonJS for Node: an ES module start loads Node's ES module loader (and, through it, fs/promises, readline and
  // streams), about 4.5 ms of a 20 ms bare start; dynamic imports of our own chunks become plain requires. The
  // sources stay ES modules: Deno and Bun run them as they are.
  rollup: {
    emitCJS: true,
    preserveDynamicImports: false,
    esbuild: { target: 'node20' },
    inlineDependencies: ['valibot', 'citty'],
  },
  hooks: {
    'rollup:options'(_ctx, options) {
      // unbuild always adds an ES module output beside the CommonJS one: only the CommonJS one is written
      const outputs = [options.output].flat().filter((output) => output?.format === 'cjs') as OutputOptions[]
      options.output = outputs
      for (const output of outputs) {
        output.manualChunks = chunkOf
        output.dynamicImportInCjs = false // zx and proper-lockfile ship CommonJS builds: required, lazily, like ours
      }
      const external = options.external
      options.external = (id, importer, resolved) =>
        /^(valibot|citty)(\/|$)/.test(id) || /\/node_modules\/(valibot|citty)\//.test(id)
          ? false
          : typeof external === 'function'
            ? external(id, importer, resolved)
            : false
    },
  },
})
