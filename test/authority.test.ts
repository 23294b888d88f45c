// The person decides, the coder only asks (issue 33, DESIGN "Authority"): nothing the command carries — its PATH, its
// environment, its flags — chooses the reviewer, reaches it, or loosens the person's limits. Each attack here worked
// on 42ee5a2 (checked by reverting the fix locally; the comments say what it did there).
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { configPath } from '../lib/ground/paths.ts'
import { expectError, expectOk, runDisk, runInReview, type Sandbox, writeChange } from './_expect.ts'
import { sandbox, tempDir } from './_helpers.ts'

/** A program in its own folder named `name` that answers `verdict` and writes its environment to `<folder>/env`. */
function reviewerProgram(name: string, verdict: 'APPROVED' | 'CHANGES_REQUESTED') {
  const dir = tempDir('pl-bin-')
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\nenv > '${dir}/env'\ncat > /dev/null\necho 'VERDICT: ${verdict}'\n`)
  chmodSync(path, 0o755)
  return { dir, path, env: () => readFileSync(join(dir, 'env'), 'utf8').split('\n') }
}

/** The person's config, whole (no test defaults): what the person wrote, nothing else. */
const writePersonConfig = (sb: Sandbox, config: object) => writeFileSync(configPath(sb.home), JSON.stringify(config))

async function startOn(sb: Sandbox, env: Record<string, string> = {}, extra: string[] = []) {
  const start = expectOk(await sb.cli(['start', '--task', 'demo task', ...extra], { env }))
  writeChange(sb)
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  return start
}

describe('the reviewer program is the person’s, never the PATH of the command that asks', () => {
  it('a codex planted first on the PATH of review does not run: the absolute path in the config does', async () => {
    // on 42ee5a2 the planted codex answered APPROVED and the round recorded reviewer codex
    const sb = sandbox()
    const person = reviewerProgram('codex', 'CHANGES_REQUESTED')
    const planted = reviewerProgram('codex', 'APPROVED')
    writePersonConfig(sb, { pair_loop: { codex_bin: person.path } })
    const start = await startOn(sb)
    expect(start).toMatchObject({ reviewer: 'codex', reviewer_source: 'config', reviewer_program: person.path })
    const review = await sb.cli(['review'], { env: { PATH: `${planted.dir}:${sb.env.PATH}` } })
    expect(expectOk(review)).toMatchObject({
      verdict: 'CHANGES_REQUESTED',
      reviewer: { tool: 'codex', kind: 'vendor', program: person.path },
    })
  })

  it('without a path in the config, start records the codex on its PATH as found at start, and review runs that one', async () => {
    const sb = sandbox()
    const found = reviewerProgram('codex', 'CHANGES_REQUESTED')
    const planted = reviewerProgram('codex', 'APPROVED')
    writePersonConfig(sb, {})
    const start = await startOn(sb, { PATH: `${found.dir}:${sb.env.PATH}` })
    expect(start).toMatchObject({ reviewer_source: 'found at start', reviewer_program: found.path })
    const review = await sb.cli(['review'], { env: { PATH: `${planted.dir}:${sb.env.PATH}` } })
    expect(expectOk(review)).toMatchObject({ verdict: 'CHANGES_REQUESTED', reviewer: { program: found.path } })
    expect(expectOk(await sb.cli(['status']))).toMatchObject({ reviewer_source: 'found at start' })
    expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toContain(
      'Reviewer: codex (reviewer_source: found at start)',
    )
    const finished = expectOk(await sb.cli(['finish', '--verdict', 'ABANDONED']))
    expect(readFileSync(finished.pr_body_path, 'utf8')).toContain(
      'reviewer: **codex (reviewer_source: found at start)**',
    )
  })
})

describe('a custom reviewer command named by a bare word is found on the reviewer’s PATH, not the caller’s', () => {
  /** A review script outside the repository and an `sh` planted in its own folder: it answers APPROVED for that
   * script (and leaves a mark), and is a plain /bin/sh for everything else (pair-loop's own launcher). */
  function plantedSh() {
    const dir = tempDir('pl-review-')
    const script = join(dir, 'review.sh')
    writeFileSync(script, "cat > /dev/null\necho 'VERDICT: CHANGES_REQUESTED'\n")
    const bin = tempDir('pl-planted-')
    const mark = join(bin, 'ran')
    const sh = `#!/bin/sh\nif [ "$1" = '${script}' ]; then touch '${mark}'; cat > /dev/null; echo 'VERDICT: APPROVED'; exit 0; fi\nexec /bin/sh "$@"\n`
    writeFileSync(join(bin, 'sh'), sh)
    chmodSync(join(bin, 'sh'), 0o755)
    return { script, bin, mark }
  }

  it('the planted sh answers a lookup of sh on that PATH (the precondition the protection is for)', () => {
    // on 42ee5a2 (and on main before this change) `review` found `sh` the same way, and the planted one approved
    const { script, bin, mark } = plantedSh()
    const found = spawnSync('sh', [script], { env: { PATH: `${bin}:/usr/bin:/bin` }, input: '', encoding: 'utf8' })
    expect(found.stdout).toBe('VERDICT: APPROVED\n')
    expect(existsSync(mark)).toBe(true)
  })

  it('review with the planted sh first on its PATH runs the system sh on the person’s script', async () => {
    const sb = sandbox()
    const { script, bin, mark } = plantedSh()
    writePersonConfig(sb, { pair_loop: { reviewer_cmd: ['sh', script] } })
    await startOn(sb)
    const review = await sb.cli(['review'], { env: { PATH: `${bin}:${sb.env.PATH}` } })
    const reviewed = expectOk(review)
    expect(reviewed).toMatchObject({ verdict: 'CHANGES_REQUESTED', reviewer: { kind: 'custom' } })
    expect(reviewed.reviewer.program.startsWith(bin)).toBe(false)
    expect(existsSync(mark)).toBe(false)
  })
})

describe('the reviewer’s environment is built, not inherited', () => {
  const FROM_CODER: Record<string, string> = {
    NODE_OPTIONS: '--require /tmp/coder-preload.js',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/coder',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/coder/v1',
    CLAUDE_CONFIG_DIR: '/tmp/coder-claude',
    CODEX_HOME: '/tmp/coder-codex',
    HOME: '/tmp/coder-home',
    CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: '1',
  }
  let seen: string[] = []
  beforeAll(async () => {
    const sb = sandbox()
    const person = reviewerProgram('codex', 'APPROVED')
    writePersonConfig(sb, {
      pair_loop: { codex_bin: person.path, reviewer_env: { PERSON_SAID: 'yes', PASSED_ON: true } },
    })
    await startOn(sb)
    expectOk(await sb.cli(['review'], { env: { ...FROM_CODER, PASSED_ON: 'the caller', LANG: 'C.UTF-8' } }))
    seen = person.env()
  })

  // on 42ee5a2 every one of these reached the reviewer as the coder set it
  it.each(Object.entries(FROM_CODER))('%s set on review does not reach the reviewer', (name, value) => {
    expect(seen).not.toContain(`${name}=${value}`)
  })

  it('a variable the person’s config sets reaches it with the person’s value', () => {
    expect(seen).toContain('PERSON_SAID=yes')
  })

  it('a variable the person’s config passes on (true) reaches it with the caller’s value, and the allow-list passes LANG', () => {
    expect(seen).toContain('PASSED_ON=the caller')
    expect(seen).toContain('LANG=C.UTF-8')
  })
})

describe('flags that loosen what the person decided are refused, naming the config key', () => {
  it('start --budget-usd above the person’s limit is usage naming budget.per_run_usd; a lower one is taken', async () => {
    // on 42ee5a2 the run's limit became $100000
    const sb = sandbox()
    writePersonConfig(sb, { budget: { per_run_usd: 5 } })
    const before = runDisk(sb)
    const refused = expectError(await sb.cli(['start', '--task', 't', '--budget-usd', '100000']), 'usage')
    expect(refused).toMatchObject({ flag: '--budget-usd', key: 'budget.per_run_usd', limit: 5 })
    expect(runDisk(sb)).toEqual(before)
    expect(expectOk(await sb.cli(['start', '--task', 't', '--budget-usd', '2'])).budget_usd).toBe(2)
  })

  it('review --reviewer-cmd builtin:approve without allow_reviewer_cmd is usage naming the key, the run untouched', async () => {
    // on 42ee5a2 the stub's canned text was recorded as an APPROVED review
    const sb = sandbox()
    writePersonConfig(sb, {})
    await startOn(sb)
    const before = runDisk(sb)
    const refused = expectError(await sb.cli(['review', '--reviewer-cmd', 'builtin:approve']), 'usage')
    expect(refused).toMatchObject({ flag: '--reviewer-cmd', key: 'pair_loop.allow_reviewer_cmd' })
    expect(runDisk(sb)).toEqual(before)
  })

  it('a reviewer of the coder’s vendor from the flags is usage naming allow_same_vendor, unless the person allows it', async () => {
    const sb = sandbox()
    writePersonConfig(sb, {})
    const sameVendor = ['start', '--task', 't', '--coder', 'codex', '--reviewer', 'codex']
    const refused = expectError(await sb.cli(sameVendor), 'usage')
    expect(refused).toMatchObject({ key: 'pair_loop.allow_same_vendor', coder: 'codex', reviewer: 'codex' })
    writePersonConfig(sb, { pair_loop: { allow_same_vendor: true } })
    expect(expectOk(await sb.cli(sameVendor))).toMatchObject({ reviewer: 'codex' })
  })

  it('a coder that names itself is reviewed by the other vendor when the person’s reviewer is its own', async () => {
    const sb = sandbox()
    writePersonConfig(sb, {}) // the person's reviewer: codex, the default
    expect(expectOk(await sb.cli(['start', '--task', 't', '--coder', 'codex']))).toMatchObject({
      coder: 'codex',
      reviewer: 'claude',
    })
  })
})

describe('what reviewed is shown as what it is', () => {
  /** A run approved by the builtin stub (the test person allows --reviewer-cmd). */
  async function approvedByStub() {
    const sb = sandbox()
    await runInReview(sb)
    expectOk(await sb.cli(['review', '--reviewer-cmd', 'builtin:approve'])) // its change is committed (writeChange)
    return sb
  }

  it('verify refuses a stub’s approval with head_not_approved, and --no-require-vendor accepts it', async () => {
    // on 42ee5a2 verify exited 0 saying nothing of who approved
    const sb = await approvedByStub()
    const refused = await sb.cli(['verify'])
    expect(refused.code).toBe(23)
    expect(expectError(refused, 'head_not_approved')).toMatchObject({
      reviewer: { tool: 'custom', kind: 'builtin' },
      required: 'vendor',
    })
    expect(expectOk(await sb.cli(['verify', '--no-require-vendor']))).toMatchObject({
      matches: true,
      reviewer: { kind: 'builtin' },
    })
  })

  it('HANDOFF, status and the PR body name the stub, never codex alone', async () => {
    // on 42ee5a2 HANDOFF and the PR body's headline said "reviewer: codex"
    const sb = await approvedByStub()
    expect(readFileSync(join(sb.repo, 'HANDOFF.md'), 'utf8')).toMatch(/Reviewer: codex.* · reviewed by builtin:approve/)
    expect(expectOk(await sb.cli(['status'])).reviewers).toEqual([
      expect.objectContaining({ round: 1, tool: 'custom', kind: 'builtin' }),
    ])
    const finished = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
    expect(readFileSync(finished.pr_body_path, 'utf8')).toMatch(
      /reviewer: \*\*codex.* · reviewed by builtin:approve\*\*/,
    )
  })
})
