// The same whole loop under node (the built dist), deno and bun (the TypeScript sources), in the spirit of
// nuxt/cli's runtimes.spec.ts: probe each runtime with --version, run start → coder-done → review (changes) →
// reply → coder-done → review (approve) → budget-check → finish → status → findings --format sarif and a few
// error paths, each runtime in its own repository and PAIR_LOOP_HOME, and require the same documents and exit
// codes from all of them once run ids, times, paths, durations and shas are normalised. Then `demo` on each.
// Deno runs the loop with the narrowest permission set that suffices (DENO_PERMISSIONS), which docs/architecture.md documents;
// with -A (every permission, a superset of those) it runs the demo, itself a whole loop in one process.
// A runtime that is missing is skipped with a loud message; under CI=true that is a failure instead.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './_build.ts'
import {
  ROOT,
  isBun,
  isolatedEnv,
  makeRepo,
  runProcess,
  scratchOnDisk,
  tempDir,
  type ProcessResult,
} from './_helpers.ts'

// Deno under narrow permissions refuses every path under /dev, where the run's temp dir may be (test/_global-setup.ts)
scratchOnDisk()

/** Enough for the whole loop and demo under Deno (zx needs uid/gid, cost lookup homedir, the review claim hostname). */
const DENO_PERMISSIONS = [
  '--allow-env',
  '--allow-read',
  '--allow-write',
  '--allow-run',
  '--allow-sys=homedir,uid,gid,hostname',
]

const CI = process.env.CI === 'true' || process.env.CI === '1'
const SCRIPT = join(ROOT, 'scripts', 'pair-loop.ts')
const DIST = join(ROOT, 'dist', 'pair-loop.cjs')
const REVIEWERS = join(ROOT, 'fixtures', 'reviewers')
// the devDependencies' binaries; PAIR_LOOP_TEST_{NODE,DENO,BUN} point at others (e.g. a missing one, to see the skip)
const NODE = process.env.PAIR_LOOP_TEST_NODE ?? (isBun ? 'node' : process.execPath)
const DENO = process.env.PAIR_LOOP_TEST_DENO ?? join(ROOT, 'node_modules', '.bin', 'deno')
const BUN = process.env.PAIR_LOOP_TEST_BUN ?? join(ROOT, 'node_modules', '.bin', 'bun')
const LOOP_TIMEOUT = 180_000

interface Runtime {
  name: string
  /** the binary probed with --version */
  bin: string
  /** the command line that stands for `pair-loop` */
  pairLoop: string[]
  version: string | null
  missing: string | null
  /** whether the step-by-step loop runs here too, or only the demo */
  loop: boolean
}

const probed = new Map<string, SpawnSyncReturns<string>>()
function probe(name: string, bin: string, pairLoop: string[], loop = true): Runtime {
  const out =
    probed.get(bin) ?? probed.set(bin, spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 })).get(bin)!
  const firstLine = out.status === 0 ? out.stdout.trim().split('\n')[0]! : ''
  const version = firstLine ? (/\d+\.\d+\.\d+\S*/.exec(firstLine)?.[0] ?? firstLine) : null
  const missing = version
    ? null
    : `${bin} --version failed: ${out.error?.message ?? (out.stderr.trim() || `exit ${out.status}`)}`
  return { name, bin, pairLoop, version, missing, loop }
}

const RUNTIMES: Runtime[] = [
  probe('node', NODE, [NODE, DIST]),
  probe('deno', DENO, [DENO, 'run', '-A', SCRIPT], false),
  probe('deno (minimal permissions)', DENO, [DENO, 'run', ...DENO_PERMISSIONS, SCRIPT]),
  probe('bun', BUN, [BUN, '--no-install', SCRIPT]),
]

// ------------------------------------------------------------------------------------------ processes and builds

type Result = ProcessResult

const run = (
  command: string[],
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
) => runProcess([...command, ...args], { timeoutMs: 90_000, ...options })

// ------------------------------------------------------------------------------------------ normalising

const RUN_ID = /\b\d{8}-\d{6}-[0-9a-f]{6}\b/g
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z/g
const SHA = /\b[0-9a-f]{40}\b/g
const EPOCH_MS = /\b1\d{12}\b/g
const DEMO_DIR = /pair-loop-demo-[A-Za-z0-9]{6}/g

/** Replace what legitimately differs between two runs (ids, times, places, durations, shas) with placeholders. */
function normaliser(places: Array<[string, string]>) {
  const ordered = [...places].sort((a, b) => b[0].length - a[0].length)
  const text = (value: string): string => {
    let s = value
    for (const [path, name] of ordered) s = s.split(path).join(name)
    return s
      .replace(RUN_ID, '<run-id>')
      .replace(ISO_TIME, '<time>')
      .replace(SHA, '<sha>')
      .replace(EPOCH_MS, '<epoch-ms>')
      .replace(DEMO_DIR, 'pair-loop-demo-<tmp>')
  }
  const walk = (value: unknown, key = ''): unknown => {
    if (typeof value === 'string') return text(value)
    if (typeof value === 'number' && /(?:^|_)ms$|duration/i.test(key)) return '<ms>'
    if (Array.isArray(value)) return value.map((item) => walk(item, key))
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v, k)]))
    return value
  }
  return { text, walk }
}

function parseJson(stdout: string): unknown {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

// ------------------------------------------------------------------------------------------ the loop

interface Step {
  name: string
  args: string[]
  input?: string
  /** change the working tree before the step */
  before?: (repo: string) => void
  /** the expected exit status; null: not asserted here, only compared across runtimes */
  exit: number | null
}

const reviewer = (script: string) => JSON.stringify([join(REVIEWERS, script)])
const FILES = {
  'README.md': '# demo\n',
  'src/a.ts':
    'export function sum(xs: number[]): number {\n  let total = 0\n  for (let i = 0; i < xs.length - 1; i++) total += xs[i]!\n  return total\n}\n',
}

const STEPS: Step[] = [
  {
    name: 'start',
    args: ['start', '--task', 'Fix the off-by-one in sum()', '--max-rounds', '3', '--budget-usd', '5'],
    exit: 0,
  },
  { name: 'review too early', args: ['review', '--reviewer-cmd', reviewer('approve.sh')], exit: 10 },
  {
    name: 'coder-done 1',
    args: ['coder-done', '--summary', 'added a test for sum'],
    exit: 0,
    before: (repo) =>
      writeFileSync(
        join(repo, 'src', 'a.test.ts'),
        "import { sum } from './a.ts'\nconsole.assert(sum([1, 2, 3]) === 6)\n",
      ),
  },
  { name: 'review 1 (changes)', args: ['review', '--reviewer-cmd', reviewer('changes.sh')], exit: 0 },
  {
    name: 'reply 1.1',
    args: ['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-'],
    input: 'Right: the loop now runs to xs.length.\n',
    exit: 0,
  },
  {
    name: 'reply 1.2',
    args: ['reply', '--finding', '1.2', '--disposition', 'wont-fix', '--body-file', '-'],
    input: 'The empty input is covered by the type.\n',
    exit: 0,
  },
  {
    name: 'coder-done 2',
    args: ['coder-done', '--summary', 'loop bound fixed', '--findings-addressed', '1'],
    exit: 0,
    before: (repo) => writeFileSync(join(repo, 'src', 'a.ts'), FILES['src/a.ts'].replace('xs.length - 1', 'xs.length')),
  },
  { name: 'review 2 (approve)', args: ['review', '--reviewer-cmd', reviewer('approve.sh')], exit: 0 },
  { name: 'budget-check', args: ['budget-check'], exit: 0 },
  { name: 'finish', args: ['finish', '--verdict', 'APPROVED'], exit: 0 },
  { name: 'status', args: ['status'], exit: 0 },
  { name: 'findings json', args: ['findings'], exit: 0 },
  { name: 'findings sarif', args: ['findings', '--format', 'sarif'], exit: 0 },
  { name: 'codes', args: ['codes'], exit: 0 },
  { name: 'help', args: ['review', '--help'], exit: 0 },
  // error paths: the same JSON error document and exit status everywhere
  { name: 'unknown flag', args: ['start', '--task', 'x', '--bogus'], exit: 2 },
  { name: 'unknown command', args: ['frobnicate'], exit: 2 },
  { name: 'malformed run id', args: ['status', '--run', 'not-a-run'], exit: 2 },
  { name: 'unknown run id', args: ['status', '--run', '20990101-000000-abcdef'], exit: 8 },
  { name: 'finish again', args: ['finish', '--verdict', 'APPROVED'], exit: null },
]

interface Transcript {
  steps: Array<{ name: string; exit: number | null; stdout: unknown; stderr: string[] }>
  handoff: string
  prBody: string
  /** raw results, for the per-runtime assertions */
  raw: Record<string, Result & { json: any }>
}

const scratch: string[] = []
let denoDir = ''

function envFor(extra: Record<string, string> = {}): NodeJS.ProcessEnv & { PAIR_LOOP_HOME: string; HOME: string } {
  // no CLAUDE_CONFIG_DIR / CODEX_HOME: HOME is a temp dir, so the defaults (and Deno's homedir permission) are exercised
  const {
    CLAUDE_CONFIG_DIR: _c,
    CODEX_HOME: _x,
    ...env
  } = isolatedEnv({ DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1', ...extra })
  scratch.push(env.HOME)
  return env as NodeJS.ProcessEnv & { PAIR_LOOP_HOME: string; HOME: string }
}

async function runLoop(runtime: Runtime): Promise<Transcript> {
  const repo = makeRepo(FILES)
  scratch.push(join(repo, '..'))
  const env = envFor()
  const { text, walk } = normaliser([
    [repo, '<repo>'],
    [env.HOME, '<home>'],
    [ROOT, '<root>'],
  ])
  const transcript: Transcript = { steps: [], handoff: '', prBody: '', raw: {} }
  for (const step of STEPS) {
    step.before?.(repo)
    const result = await run(runtime.pairLoop, step.args, { cwd: repo, env, input: step.input })
    const json = parseJson(result.stdout)
    transcript.raw[step.name] = { ...result, json }
    transcript.steps.push({
      name: step.name,
      exit: result.code,
      stdout: json === undefined ? text(result.stdout) : walk(json),
      // pair-loop's own stderr lines (a runtime's own warnings, if any, are not part of the contract)
      stderr: result.stderr
        .split('\n')
        .filter((line) => line.startsWith('pair-loop'))
        .map(text),
    })
  }
  const finished = transcript.raw.finish!.json
  transcript.handoff = text(readFileSync(join(repo, 'HANDOFF.md'), 'utf8'))
  transcript.prBody = finished?.pr_body_path ? text(readFileSync(finished.pr_body_path, 'utf8')) : ''
  return transcript
}

/** The runtime's executable as its own process.execPath (Deno.execPath) names it: the binary, links resolved. */
function execPathOf(runtime: Runtime): string {
  const lookup = () => spawnSync('sh', ['-c', 'command -v "$0"', runtime.bin], { encoding: 'utf8' }).stdout.trim()
  return realpathSync(runtime.bin.includes('/') ? runtime.bin : lookup())
}

async function runDemo(runtime: Runtime) {
  const tmp = tempDir('pl-demo-tmp-')
  scratch.push(tmp)
  const env = envFor({ TMPDIR: tmp })
  const result = await run(runtime.pairLoop, ['demo'], { cwd: tmp, env })
  const { walk } = normaliser([
    [tmp, '<tmp>'],
    [ROOT, '<root>'],
    [execPathOf(runtime), '<runtime>'], // the demo's stub reviewer runs under the runtime running the demo
  ])
  const json = parseJson(result.stdout) as any
  return { result, json, normalised: json === undefined ? undefined : walk(json) }
}

/** Each runtime's loop and demo run once, whichever tests ask for them (and in which order). */
const loops = new Map<string, Promise<Transcript>>()
const demos = new Map<string, ReturnType<typeof runDemo>>()
const loopOf = (runtime: Runtime) =>
  loops.get(runtime.name) ?? loops.set(runtime.name, runLoop(runtime)).get(runtime.name)!
const demoOf = (runtime: Runtime) =>
  demos.get(runtime.name) ?? demos.set(runtime.name, runDemo(runtime)).get(runtime.name)!

// ------------------------------------------------------------------------------------------ the tests

const available = RUNTIMES.filter((runtime) => runtime.version !== null)
for (const runtime of RUNTIMES.filter((r) => r.missing)) {
  const message = `\n!!! runtimes.test.ts: ${runtime.name} is not available (${runtime.missing}); ${CI ? 'CI=true: failing' : 'skipping its tests'}\n`
  if (!CI) process.stderr.write(message)
}

beforeAll(() => {
  denoDir = tempDir('pl-deno-dir-')
  scratch.push(denoDir)
  ensureBuilt()
}, 180_000)

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

describe('the runtimes are there', () => {
  it.each(RUNTIMES.map((runtime) => [runtime.name, runtime] as const))(
    '%s answers --version (missing: skipped locally, failed under CI)',
    (_name, runtime) => {
      if (runtime.missing && CI) throw new Error(`${runtime.name} is required under CI: ${runtime.missing}`)
      if (runtime.missing) return
      expect(runtime.version).toMatch(/\d+\.\d+\.\d+/)
    },
  )
})

for (const runtime of RUNTIMES) {
  describe.skipIf(runtime.version === null)(`${runtime.name} (${runtime.version ?? 'missing'})`, () => {
    // the loop where it is asked for: not a skipped test elsewhere (under CI=true nothing is skipped)
    if (runtime.loop)
      it(
        'runs the whole loop: changes requested, replies, a fix, approval, finish, status, findings',
        async () => {
          const transcript = await loopOf(runtime)
          const raw = transcript.raw
          const expected = STEPS.filter((step) => step.exit !== null).map((step) => [step.name, step.exit])
          const seen = expected.map(([name]) => [name, raw[name as string]!.code])
          expect(
            seen,
            STEPS.map(
              (s) =>
                `${s.name}: exit ${raw[s.name]!.code}\n  stdout: ${raw[s.name]!.stdout.trim()}\n  stderr: ${raw[s.name]!.stderr.trim()}`,
            ).join('\n'),
          ).toEqual(expected)

          expect(raw.start!.json).toMatchObject({ version: 1, next: 'coder-done', max_rounds: 3, budget_usd: 5 })
          expect(raw['review 1 (changes)']!.json).toMatchObject({
            round: 1,
            verdict: 'CHANGES_REQUESTED',
            next: 'reply',
          })
          expect(raw['review 1 (changes)']!.json.findings.map((f: { id: string }) => f.id)).toEqual(['1.1', '1.2'])
          expect(raw['review 2 (approve)']!.json).toMatchObject({
            round: 2,
            verdict: 'APPROVED',
            findings: [],
            next: 'finish',
          })
          expect(raw.finish!.json).toMatchObject({ verdict: 'APPROVED', rounds: 2 })
          expect(raw.status!.json).toMatchObject({
            phase: 'finished',
            round: 2,
            next: null,
            outcome: { verdict: 'APPROVED' },
          })
          const sarif = raw['findings sarif']!.json
          expect(sarif.version).toBe('2.1.0')
          expect(sarif.runs[0].results).toHaveLength(2)
          for (const name of ['unknown flag', 'unknown command', 'malformed run id'])
            expect(raw[name]!.json.errors[0].code).toBe('usage')
          expect(raw['unknown run id']!.json.errors[0].code).toBe('run_not_found')
          expect(raw['review too early']!.json.errors[0]).toMatchObject({ code: 'wrong_phase' })
          expect(raw['unknown flag']!.stderr).toBe('pair-loop start: usage: unknown flag --bogus\n')
          expect(transcript.handoff).toContain('VERDICT: APPROVED')
        },
        LOOP_TIMEOUT,
      )

    it(
      'runs `pair-loop demo` to phase finished, verdict APPROVED',
      async () => {
        const { result, json } = await demoOf(runtime)
        expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0)
        expect(result.stdout.trim().split('\n')).toHaveLength(1)
        expect(json).toMatchObject({ phase: 'finished', round: 2, next: null, outcome: { verdict: 'APPROVED' } })
        expect(result.stderr).toContain('pair-loop demo')
      },
      LOOP_TIMEOUT,
    )
  })
}

describe.skipIf(available.length < 2)(`node, deno and bun agree (${available.map((r) => r.name).join(', ')})`, () => {
  it(
    'the loop prints the same documents, stderr lines and exit codes, and writes the same HANDOFF.md and PR body',
    async () => {
      const [first, ...others] = available.filter((runtime) => runtime.loop)
      const base = await loopOf(first!)
      expect(base.steps.map((step) => step.name)).toEqual(STEPS.map((step) => step.name))
      const shape = (t: Transcript) => ({ steps: t.steps, handoff: t.handoff, prBody: t.prBody })
      for (const other of others) {
        const transcript = await loopOf(other)
        expect({ runtime: other.name, ...shape(transcript) }).toEqual({ runtime: other.name, ...shape(base) })
      }
    },
    LOOP_TIMEOUT * available.length,
  )

  it(
    'demo prints the same final status document',
    async () => {
      const [first, ...others] = available
      const base = await demoOf(first!)
      expect(base.normalised).toMatchObject({ phase: 'finished' })
      for (const other of others) {
        const demo = await demoOf(other)
        expect({ runtime: other.name, status: demo.normalised }).toEqual({
          runtime: other.name,
          status: base.normalised,
        })
      }
    },
    LOOP_TIMEOUT * available.length,
  )
})
