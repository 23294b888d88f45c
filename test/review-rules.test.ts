// The person's rules and excludes (DESIGN, The reviewer; issue 35 item 5): `pair_loop.review_instructions` is a file
// of the person's rules added to the reviewer's prompt as theirs, read when the review runs; `pair_loop.review_exclude`
// names changed paths the reviewer is not shown, said in the prompt and the PR body as "excluded by config, not
// reviewed". A repository config that sets either needs the person's trust. Through the CLI with the stub reviewers.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { globMatcher } from '../lib/ground/glob.ts'
import { runStatePath } from '../lib/ground/paths.ts'
import { keysNeedingTrust, readConfig } from '../lib/run/config.ts'
import { git, sandbox, tempDir, writeTestHomeConfig } from './_helpers.ts'
import { expectError, expectOk, type Sandbox } from './_expect.ts'
import { reviewArgs, SLOW } from './_review.ts'
import { prSandbox, world } from './_pr.ts'

const SECRET = 'const leaked = "the excluded bytes"\n'
const SHOWN = 'export const shown = "reviewed bytes"\n'

/** A run started under the person's `pair_loop` keys, its change (two files) handed over: phase reviewing. */
async function inReview(
  keys: Record<string, unknown> = {},
  files?: Record<string, string>,
): Promise<Sandbox & { runId: string }> {
  const sb = sandbox(files)
  writeTestHomeConfig(sb.home, { pair_loop: keys })
  const runId = expectOk(await sb.cli(['start', '--task', 'demo task'])).run_id as string
  writeFileSync(join(sb.repo, 'app.ts'), SHOWN)
  writeFileSync(join(sb.repo, 'yarn.lock'), SECRET)
  expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
  return { ...sb, runId }
}

/** Review with the approve stub, keeping the prompt it was given. */
async function promptOf(sb: Sandbox): Promise<{ doc: any; prompt: string }> {
  const promptFile = join(tempDir('pl-prompt-'), 'prompt.txt')
  const doc = expectOk(await sb.cli(reviewArgs('approve'), { env: { STUB_PROMPT_FILE: promptFile } }))
  return { doc, prompt: readFileSync(promptFile, 'utf8') }
}

function rulesFile(text: string | Buffer): string {
  const path = join(tempDir('pl-rules-'), 'rules.md')
  writeFileSync(path, text)
  return path
}

// ---------------------------------------------------------------- the glob dialect (docs/config.md)

describe('the exclude glob dialect', () => {
  it.each<[string, string, boolean]>([
    ['*.lock', 'yarn.lock', true],
    ['*.lock', 'deep/er/yarn.lock', true], // no `/`: a name at any depth
    ['*.lock', 'yarn.locks', false],
    ['vendor/', 'vendor/lib/x.js', true], // a folder matched: everything below it
    ['vendor', 'third/vendor/x.js', true],
    ['/vendor', 'third/vendor/x.js', false], // a leading `/`: from the top only
    ['docs/*.md', 'docs/a.md', true],
    ['docs/*.md', 'docs/sub/a.md', false], // `*` stays within one name
    ['docs/generated/**', 'docs/generated/a/b.md', true],
    ['src/**/*.gen.ts', 'src/x.gen.ts', true], // `**`: zero folders too
    ['src/**/*.gen.ts', 'src/a/b/x.gen.ts', true],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['a.b', 'axb', false], // `.` is itself
    ['*', '.env', true], // dot files are not special
    ['App.ts', 'app.ts', false], // case-sensitive
  ])('%s matches %s: %s', (pattern, path, matches) => {
    expect(globMatcher([pattern])(path)).toBe(matches)
  })

  it('matches nothing without a pattern', () => {
    expect(globMatcher([])('anything')).toBe(false)
  })
})

// ---------------------------------------------------------------- the keys in config

describe('the keys in config', () => {
  it.each<[string, unknown, string]>([
    ['review_instructions', 'rules.md', 'the absolute path of a file of your rules for the reviewer, or null'],
    ['review_exclude', ['docs//x'], 'a glob naming something'],
    ['review_exclude', '*.lock', 'a list of globs'],
  ])('refuses pair_loop.%s: %j as config_invalid saying what it must be', (key, value, said) => {
    const path = join(tempDir('pl-config-'), 'config.json')
    writeFileSync(path, JSON.stringify({ pair_loop: { [key]: value } }))
    let error: any
    try {
      readConfig(path)
    } catch (caught) {
      error = caught
    }
    expect(error?.code).toBe('config_invalid')
    expect(error.message).toContain(`"pair_loop.${key}`)
    expect(error.message).toContain(said)
  })

  it.each([
    ['review_instructions', '/etc/rules.md'],
    ['review_exclude', ['*.lock']],
    ['review_exclude', []],
  ])('a tracked repository file that sets pair_loop.%s needs trust', (key, value) => {
    expect(keysNeedingTrust({ pair_loop: { [key]: value } }, undefined, { tracked: true })).toEqual([
      `pair_loop.${key}`,
    ])
  })
})

// ---------------------------------------------------------------- the person's rules in the prompt

describe("the person's rules", () => {
  it(
    "are in the prompt in their own section, marked as the person's, outside the data under review",
    async () => {
      const rules = rulesFile('Every public function needs a test.\nNo TODO comments.\n')
      const sb = await inReview({ review_instructions: rules })
      const { prompt } = await promptOf(sb)
      const section = prompt.indexOf("## The person's rules for this review")
      expect(section).toBeGreaterThan(-1)
      expect(prompt).toContain('Every public function needs a test.\nNo TODO comments.\n')
      expect(prompt).toContain(`They come from the person, not from the coder`)
      expect(prompt).toContain(rules)
      // before the sections of data under review, so none of them holds it
      expect(section).toBeLessThan(prompt.indexOf('## The change'))
      expect(section).toBeLessThan(prompt.indexOf('## Conversation so far'))
    },
    SLOW,
  )

  it(
    'are read when the review runs: an edit after start is what the reviewer gets',
    async () => {
      const rules = rulesFile('first rules\n')
      const sb = await inReview({ review_instructions: rules })
      writeFileSync(rules, 'the rules as edited after start\n')
      const { prompt } = await promptOf(sb)
      expect(prompt).toContain('the rules as edited after start')
      expect(prompt).not.toContain('first rules')
    },
    SLOW,
  )

  it(
    'are absent without the key (the control: the section comes from the file)',
    async () => {
      const sb = await inReview()
      const { prompt } = await promptOf(sb)
      expect(prompt).not.toContain("The person's rules")
    },
    SLOW,
  )

  const fifo = () => {
    const path = join(tempDir('pl-rules-'), 'rules.fifo')
    expect(spawnSync('mkfifo', [path]).status).toBe(0)
    return path
  }
  const link = () => {
    const path = join(tempDir('pl-rules-'), 'rules-link.md')
    symlinkSync(rulesFile('linked rules\n'), path)
    return path
  }
  it.each<[string, (sb: Sandbox) => string, string]>([
    ['a FIFO', () => fifo(), 'is a FIFO (named pipe), not a regular file'],
    ['missing', () => join(tempDir('pl-rules-'), 'gone.md'), 'does not exist'],
    ['too big', () => rulesFile('x'.repeat(64 * 1024 + 1)), 'over the 65536'],
    ['not UTF-8', () => rulesFile(Buffer.from([0x52, 0xff, 0xfe, 0x0a])), 'is not UTF-8 text'],
    ['a symbolic link', () => link(), 'is a symbolic link'],
    ['inside the working tree', (sb) => join(sb.repo, 'RULES.md'), 'is inside the working tree'],
  ])(
    'a rules file %s is config_invalid naming it, the run unchanged',
    async (_what, make, said) => {
      const sb = sandbox()
      const path = make(sb)
      writeTestHomeConfig(sb.home, { pair_loop: { review_instructions: path } })
      const runId = expectOk(await sb.cli(['start', '--task', 'demo task'])).run_id as string
      if (path.startsWith(sb.repo)) writeFileSync(path, 'rules the coder wrote\n') // a regular file: only where it is refused
      writeFileSync(join(sb.repo, 'app.ts'), SHOWN)
      expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
      const before = readFileSync(runStatePath(runId, sb.home), 'utf8')
      const error = expectError(await sb.cli(reviewArgs('approve')), 'config_invalid')
      expect(error.message).toContain(path)
      expect(error.message).toContain(said)
      expect(error).toMatchObject({ path, keys: ['pair_loop.review_instructions'] })
      expect(readFileSync(runStatePath(runId, sb.home), 'utf8')).toBe(before)
    },
    SLOW,
  )
})

// ---------------------------------------------------------------- excluded paths

describe('excluded paths', () => {
  it(
    'are left out of the prompt, named in it as excluded by config, not reviewed',
    async () => {
      const sb = await inReview({ review_exclude: ['*.lock'] })
      const { prompt } = await promptOf(sb)
      expect(prompt).not.toContain('the excluded bytes')
      expect(prompt).toContain(SHOWN.trim()) // the rest is shown
      expect(prompt).toContain(
        "1 changed path(s) are excluded by config, not reviewed (the person's pair_loop.review_exclude): yarn.lock.",
      )
      expect(prompt).toMatch(
        / yarn\.lock \| added, excluded by config, not reviewed: NOT REVIEWED \(now [0-9a-f]{40}, 36 bytes\)/,
      )
      // nor in the reviewer's copy of the snapshot: it is named there as left out
      expect(prompt).toContain('yarn.lock (excluded by config, not reviewed)')
      const copy = /read-only copy of the snapshot under review at (\S+) \(/.exec(prompt)?.[1]
      expect(copy && existsSync(join(copy, 'app.ts'))).toBe(true)
      expect(existsSync(join(copy!, 'yarn.lock'))).toBe(false)
    },
    SLOW,
  )

  it(
    'are shown without the key (the control: the exclude is what hides them)',
    async () => {
      const sb = await inReview()
      const { prompt } = await promptOf(sb)
      expect(prompt).toContain('the excluded bytes')
      expect(prompt).not.toContain('excluded by config')
    },
    SLOW,
  )

  it(
    'are named in the PR body as excluded by config, not reviewed',
    async () => {
      const sb = await inReview({ review_exclude: ['yarn.lock'] })
      await promptOf(sb)
      git(sb.repo, ['add', '-A'], sb.env)
      git(sb.repo, ['commit', '-qm', 'the approved change'], sb.env)
      const done = expectOk(await sb.cli(['finish', '--verdict', 'APPROVED']))
      const body = readFileSync(done.pr_body_path, 'utf8')
      const oid = git(sb.repo, ['rev-parse', 'HEAD:yarn.lock'], sb.env).trim()
      expect(body).toContain(`- \`yarn.lock\` — excluded by config, not reviewed, 36 bytes (blob \`${oid}\`)`)
      expect(body).toContain(
        '1 of them is excluded by config, not reviewed (`pair_loop.review_exclude`): it ships in this PR',
      )
    },
    SLOW,
  )

  it(
    'set by an untrusted repository config is config_untrusted; trusted, it applies',
    async () => {
      const sb = sandbox({
        'README.md': '# demo\n',
        '.pair-loop.json': '{"pair_loop": {"review_exclude": ["*.lock"]}}\n',
      })
      const refused = expectError(await sb.cli(['start', '--task', 'demo task']), 'config_untrusted')
      expect(refused.keys).toEqual(['pair_loop.review_exclude'])
      expect(refused.message).toContain(
        'pair_loop.review_exclude, which would hide the changed paths matching ["*.lock"] from the reviewer (excluded by config, not reviewed)',
      )
      // the positive control: trusted, the same file blinds the reviewer to the lock file
      expectOk(await sb.cli(['trust']))
      expectOk(await sb.cli(['start', '--task', 'demo task']))
      writeFileSync(join(sb.repo, 'app.ts'), SHOWN)
      writeFileSync(join(sb.repo, 'yarn.lock'), SECRET)
      expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
      const { prompt } = await promptOf(sb)
      expect(prompt).not.toContain('the excluded bytes')
      expect(prompt).toContain('yarn.lock | added, excluded by config, not reviewed')
    },
    SLOW,
  )

  it(
    'lets a repository config name rules only with trust',
    async () => {
      const rules = rulesFile('the repository’s rules\n')
      const sb = sandbox({
        'README.md': '# demo\n',
        '.pair-loop.json': JSON.stringify({ pair_loop: { review_instructions: rules } }),
      })
      const refused = expectError(await sb.cli(['start', '--task', 'demo task']), 'config_untrusted')
      expect(refused.keys).toEqual(['pair_loop.review_instructions'])
      expect(refused.message).toContain(`add the rules in ${rules} to the reviewer's prompt as yours`)
      expectOk(await sb.cli(['trust']))
      expectOk(await sb.cli(['start', '--task', 'demo task']))
      writeFileSync(join(sb.repo, 'app.ts'), SHOWN)
      expectOk(await sb.cli(['coder-done', '--summary', 'round one']))
      const { prompt } = await promptOf(sb)
      expect(prompt).toContain('the repository’s rules')
    },
    SLOW,
  )
})

// ---------------------------------------------------------------- the final round on the PR's diff

describe('the final round (review --pr)', () => {
  const file = (path: string, line: string) => [
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    '@@ -1 +1,2 @@',
    ' x',
    `+${line}`,
  ]
  const DIFF = [...file('src/a.ts', 'export const b = 2'), ...file('yarn.lock', 'the excluded bytes'), ''].join('\n')

  /** The prompt of a final round on DIFF under the person's `pair_loop` keys. */
  async function finalPrompt(keys: Record<string, unknown>): Promise<string> {
    const sb = await prSandbox(world({ diff: DIFF }), { pair_loop: { pr_final_round: true, ...keys } }, 7)
    const promptFile = join(tempDir('pl-prompt-'), 'prompt.txt')
    const script = join(tempDir('pl-final-'), 'review.sh')
    writeFileSync(script, `cat >${JSON.stringify(promptFile)}\necho 'VERDICT: APPROVED'\n`)
    expectOk(await sb.cli(['review', '--pr', '--reviewer-cmd', JSON.stringify(['sh', script])]))
    return readFileSync(promptFile, 'utf8')
  }

  it(
    'leaves an excluded file out of the PR diff it shows, named as excluded by config',
    async () => {
      const prompt = await finalPrompt({ review_exclude: ['*.lock'] })
      expect(prompt).toContain('+export const b = 2')
      expect(prompt).not.toContain('the excluded bytes')
      expect(prompt).toContain(' yarn.lock | excluded by config, not reviewed: NOT REVIEWED')
      // the control: without the exclude, the same PR diff shows it
      expect(await finalPrompt({})).toContain('+the excluded bytes')
    },
    SLOW,
  )
})
