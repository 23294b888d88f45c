// The fake gh (fixtures/gh/fake-gh.cjs) run in the test's own process, for a command run in-process whose PATH finds
// the fake first: the same answers from the same code, without a shell and a Node process per call. A slow GitHub
// (FAKE_GH_DELAY_MS) and any other gh are still started as processes, so the product's own time limit is what ends them.
import { accessSync, constants } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { InProcessProgram } from '../lib/ground/context.ts'

interface FakeGhResult {
  code: number
  stdout: string
  stderr: string
  hangMs: number
}

const fake = createRequire(import.meta.url)('../fixtures/gh/fake-gh.cjs') as {
  run: (call: { argv: string[]; env: NodeJS.ProcessEnv; cwd: string }) => FakeGhResult
}

export const FAKE_GH = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'gh', 'gh')

export const fakeGhInProcess: InProcessProgram = async ({ args, cwd, env, timeoutMs }) => {
  if (ghOnPath(env.PATH ?? '') !== FAKE_GH || Number(env.FAKE_GH_DELAY_MS) > 0) return undefined
  const result = fake.run({ argv: args, env, cwd })
  if (result.hangMs > 0) {
    await sleep(Math.min(result.hangMs, timeoutMs))
    // killed at the time limit, as exec's own timeout leaves a process: no exit status, nothing said
    if (result.hangMs >= timeoutMs) return { ok: false, exitCode: null, stdout: '', stderr: '' }
  }
  return { ok: result.code === 0, exitCode: result.code, stdout: result.stdout, stderr: result.stderr }
}

/** The `gh` a shell would run with this PATH (the first executable one), looked up afresh: a test may make one. */
function ghOnPath(path: string): string | undefined {
  for (const dir of path.split(':')) {
    const gh = join(dir || '.', 'gh')
    try {
      accessSync(gh, constants.X_OK)
      return gh
    } catch {}
  }
  return undefined
}
