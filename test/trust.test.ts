import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { REPO_CONFIG_NAME } from '../lib/run/config.ts'
import { configPath } from '../lib/ground/paths.ts'
import { expectError, expectOk, runDisk } from './_expect.ts'
import { git, ROOT, sandbox, writeTestHomeConfig } from './_helpers.ts'

// The repository's .pair-loop.json is part of the change under review: it may not choose or pay for its reviewer
// unless the person trusted that exact content.

const stub = (name: string) => ['sh', join(ROOT, 'fixtures', 'reviewers', `${name}.sh`)]
const writeHomeConfig = (home: string, config: unknown) => {
  mkdirSync(dirname(configPath(home)), { recursive: true })
  writeFileSync(configPath(home), JSON.stringify(config))
}
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** A sandbox whose repository commits `config` as its .pair-loop.json, and `files` (and a home config, if given). */
function withRepoConfig(config: unknown, home?: unknown, files: Record<string, string> = {}) {
  const sb = sandbox({ 'a.txt': 'a\n', [REPO_CONFIG_NAME]: JSON.stringify(config), ...files })
  if (home !== undefined) writeHomeConfig(sb.home, home)
  return { ...sb, configFile: join(sb.repo, REPO_CONFIG_NAME) }
}

describe('start under a repository config', () => {
  it.each<[string, unknown, unknown]>([
    ['the reviewer and the round cap', { pair_loop: { reviewer: 'claude', max_rounds: 5 } }, undefined],
    [
      'the timeout and a larger diff cap',
      { pair_loop: { reviewer_timeout_s: 60, max_diff_bytes: 500_000 } },
      undefined,
    ],
    ['the final PR round', { pair_loop: { pr_final_round: true } }, undefined],
    [
      'a diff cap no smaller than the person’s',
      { pair_loop: { max_diff_bytes: 1000 } },
      { pair_loop: { max_diff_bytes: 1000 } },
    ],
    ['the warn ratio', { budget: { warn_ratio: 0.5 } }, undefined],
    ['a budget lower than the person’s', { budget: { per_run_usd: 1 } }, { budget: { per_run_usd: 5 } }],
    ['a budget where the person set none', { budget: { per_run_usd: 1 } }, undefined],
  ])('honours %s without any trust', async (_name, config, home) => {
    const sb = withRepoConfig(config, home)
    expectOk(await sb.cli(['start', '--task', 'x']))
  })

  it.each<[string, unknown, unknown, string[]]>([
    ['a reviewer command', { pair_loop: { reviewer_cmd: stub('approve') } }, undefined, ['pair_loop.reviewer_cmd']],
    ['a codex binary in the repository', { pair_loop: { codex_bin: './x' } }, undefined, ['pair_loop.codex_bin']],
    ['a claude binary', { pair_loop: { claude_bin: '/tmp/claude' } }, undefined, ['pair_loop.claude_bin']],
    ['zero prices', { pricing: { 'claude-sonnet-4-5': { input: 0, output: 0 } } }, undefined, ['pricing']],
    // the coder's agent decides whose transcripts count as its spend: a Claude coder saying "codex" costs $0
    ['the coder agent', { pair_loop: { coder: 'codex' } }, undefined, ['pair_loop.coder']],
    ['the reviewer’s model', { pair_loop: { reviewer_model: 'cheap-model' } }, undefined, ['pair_loop.reviewer_model']],
    // an empty list turns a bot's CHANGES_REQUESTED on the PR into success
    ['the PR’s review bots', { pair_loop: { pr_bots: [] } }, undefined, ['pair_loop.pr_bots']],
    [
      'a budget above the person’s',
      { budget: { per_run_usd: 50 } },
      { budget: { per_run_usd: 5 } },
      ['budget.per_run_usd'],
    ],
    [
      'no budget where the person set one',
      { budget: { per_run_usd: null } },
      { budget: { per_run_usd: 5 } },
      ['budget.per_run_usd'],
    ],
    // a 1-byte cap would leave the reviewer the stat and a truncation note, and none of the change's text
    ['a diff cap below the default', { pair_loop: { max_diff_bytes: 1 } }, undefined, ['pair_loop.max_diff_bytes']],
    [
      'a diff cap below the person’s',
      { pair_loop: { max_diff_bytes: 5000 } },
      { pair_loop: { max_diff_bytes: 10_000 } },
      ['pair_loop.max_diff_bytes'],
    ],
  ])(
    'refuses %s as config_untrusted naming the keys and the command, and opens no run',
    async (_n, config, home, keys) => {
      const sb = withRepoConfig(config, home)
      const before = runDisk(sb)
      const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
      expect(error).toMatchObject({ path: sb.configFile, keys, sha256: sha256(sb.configFile), retryable: false })
      expect(error.message).toContain('pair-loop trust')
      expect(runDisk(sb)).toEqual(before)
    },
  )

  it('honours the keys once the person trusted this exact content, and not after the file changed', async () => {
    const sb = withRepoConfig({ pair_loop: { reviewer_cmd: stub('approve') } })
    const trusted = expectOk(await sb.cli(['trust']))
    expect(trusted).toMatchObject({
      path: sb.configFile,
      sha256: sha256(sb.configFile),
      trusted: true,
      trusted_keys: ['pair_loop.reviewer_cmd'],
      changed: true,
    })
    expect(expectOk(await sb.cli(['trust'])).changed).toBe(false)
    writeFileSync(sb.configFile, JSON.stringify({ pair_loop: { reviewer_cmd: stub('changes') } }))
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'another reviewer'], {
      cwd: sb.repo,
    })
    expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
    expectOk(await sb.cli(['trust']))
    expectOk(await sb.cli(['start', '--task', 'x']))
  })

  it('shows and revokes the trust', async () => {
    const sb = withRepoConfig({ pricing: { m: { input: 1, output: 1 } } })
    expect(expectOk(await sb.cli(['trust', '--show']))).toMatchObject({
      trusted: false,
      keys_needing_trust: ['pricing'],
    })
    expectOk(await sb.cli(['trust']))
    expect(expectOk(await sb.cli(['trust', '--show']))).toMatchObject({ trusted: true, changed: false })
    expect(expectOk(await sb.cli(['trust', '--revoke']))).toMatchObject({ trusted: false, changed: true })
    expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
  })

  it('says what the file does with each value: "runs `sh review.sh`", "raises the budget from $5 to $100"', async () => {
    const config = { pair_loop: { reviewer_cmd: ['sh', 'review.sh'] }, budget: { per_run_usd: 100 } }
    const sb = withRepoConfig(config, { budget: { per_run_usd: 5 } }, { 'review.sh': 'echo VERDICT: APPROVED\n' })
    const expected = [
      {
        key: 'pair_loop.reviewer_cmd',
        value: ['sh', 'review.sh'],
        needs_trust: true,
        effect: 'runs `sh review.sh` as the reviewer',
      },
      { key: 'budget.per_run_usd', value: 100, needs_trust: true, effect: 'raises the budget from $5 to $100' },
    ]
    expect(expectOk(await sb.cli(['trust'])).settings).toEqual(expected)
    expect(expectOk(await sb.cli(['trust', '--show'])).settings).toEqual(expected)
  })

  it('lists with --show every key the file sets with its value, those it may set freely too', async () => {
    const sb = withRepoConfig(
      { pair_loop: { max_rounds: 5 }, budget: { per_run_usd: 1 } },
      { budget: { per_run_usd: 5 } },
    )
    expect(expectOk(await sb.cli(['trust', '--show'])).settings).toEqual([
      {
        key: 'pair_loop.max_rounds',
        value: 5,
        needs_trust: false,
        effect: 'allows 5 review rounds before asking you (yours: 3)',
      },
      { key: 'budget.per_run_usd', value: 1, needs_trust: false, effect: 'lowers the budget from $5 to $1' },
    ])
  })

  it('has nothing to trust without a .pair-loop.json', async () => {
    const sb = sandbox()
    const error = expectError(await sb.cli(['trust']), 'usage')
    expect(error.path).toBe(join(sb.repo, REPO_CONFIG_NAME))
  })
})

describe('a config file written mid-run', () => {
  it('cannot choose the reviewer: a plain review runs the reviewer the run started with', async () => {
    const sb = sandbox({ 'a.txt': 'a\n' })
    writeHomeConfig(sb.home, { pair_loop: { reviewer_cmd: stub('changes') } })
    expectOk(await sb.cli(['start', '--task', 'x']))
    // the coder writes its own config, untracked, asking for an approving reviewer
    writeFileSync(join(sb.repo, REPO_CONFIG_NAME), JSON.stringify({ pair_loop: { reviewer_cmd: stub('approve') } }))
    writeFileSync(join(sb.repo, 'a.txt'), 'b\n')
    expectOk(await sb.cli(['coder-done', '--summary', 's']))
    const review = expectOk(await sb.cli(['review']))
    expect(review.verdict).toBe('CHANGES_REQUESTED')
  })

  it('is reported by status as config_changed, the frozen config still in force', async () => {
    const sb = sandbox({ 'a.txt': 'a\n' })
    const { run_id } = expectOk(await sb.cli(['start', '--task', 'x']))
    expect(expectOk(await sb.cli(['status'])).config_changed).toBe(false)
    writeFileSync(join(sb.repo, REPO_CONFIG_NAME), JSON.stringify({ pair_loop: { max_rounds: 9 } }))
    expect(expectOk(await sb.cli(['status'])).config_changed).toBe(true)
    expect(sb.state(run_id).config?.pair_loop.max_rounds).toBe(3)
  })
})

describe('a repository config git does not track at the base', () => {
  /** A sandbox whose .pair-loop.json holds `config`, listed in .git/info/exclude: never dirty, never committed. */
  function withExcludedConfig(config: unknown) {
    const sb = sandbox({ 'a.txt': 'a\n' })
    appendFileSync(join(sb.repo, '.git', 'info', 'exclude'), `${REPO_CONFIG_NAME}\n`)
    writeFileSync(join(sb.repo, REPO_CONFIG_NAME), JSON.stringify(config))
    return { ...sb, configFile: join(sb.repo, REPO_CONFIG_NAME) }
  }
  const gitIn = (sb: { repo: string; env: NodeJS.ProcessEnv }, args: string[]) => git(sb.repo, args, sb.env)

  it('needs trust for every key it sets, even one a tracked file sets freely', async () => {
    const sb = withExcludedConfig({ pair_loop: { max_rounds: 5 } })
    const before = runDisk(sb)
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
    expect(error).toMatchObject({ path: sb.configFile, keys: ['pair_loop.max_rounds'], tracked_at_base: false })
    expect(error.message).toMatch(/not the file git tracks at the run's base commit/)
    expect(error.message).toContain(`pair-loop trust --cwd ${sb.repo}`)
    expect(runDisk(sb)).toEqual(before)
  })

  it('names what each key would do with its value: the PR bots, the coder, the reviewer’s model', async () => {
    const sb = withExcludedConfig({ pair_loop: { pr_bots: [], coder: 'codex', reviewer_model: 'cheap-model' } })
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
    expect(error.effects).toEqual([
      { key: 'pair_loop.coder', value: 'codex', effect: expect.stringMatching(/spending from codex's transcripts/) },
      { key: 'pair_loop.reviewer_model', value: 'cheap-model', effect: expect.stringContaining('"cheap-model"') },
      { key: 'pair_loop.pr_bots', value: [], effect: expect.stringMatching(/no bot's review.*no longer block/) },
    ])
    for (const { key, effect } of error.effects) expect(error.message).toContain(`${key}, which ${effect}`)
  })

  it('needs trust when the tracked file was changed and git is told not to look (skip-worktree)', async () => {
    const sb = withRepoConfig({ pair_loop: { max_rounds: 2 } })
    gitIn(sb, ['update-index', '--skip-worktree', REPO_CONFIG_NAME])
    writeFileSync(sb.configFile, JSON.stringify({ pair_loop: { max_rounds: 9 } }))
    expect(gitIn(sb, ['status', '--porcelain'])).toBe('') // the trap: the tree reads as clean
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'config_untrusted')
    expect(error).toMatchObject({ keys: ['pair_loop.max_rounds'], tracked_at_base: false })
  })

  it('needs trust when the file was committed after the --base commit', async () => {
    const sb = sandbox({ 'a.txt': 'a\n' })
    writeFileSync(join(sb.repo, REPO_CONFIG_NAME), JSON.stringify({ pair_loop: { max_rounds: 5 } }))
    gitIn(sb, ['add', REPO_CONFIG_NAME])
    gitIn(sb, ['commit', '-qm', 'config'])
    expectError(await sb.cli(['start', '--task', 'x', '--base', 'HEAD~1']), 'config_untrusted')
    expectOk(await sb.cli(['start', '--task', 'x']))
  })

  it('is honoured once the person trusted it, and the run goes by it', async () => {
    const sb = withExcludedConfig({ pair_loop: { max_rounds: 5 } })
    expect(expectOk(await sb.cli(['trust', '--show']))).toMatchObject({
      trusted: false,
      tracked_at_head: false,
      keys_needing_trust: ['pair_loop.max_rounds'],
    })
    expectOk(await sb.cli(['trust']))
    expect(expectOk(await sb.cli(['start', '--task', 'x'])).max_rounds).toBe(5)
  })

  it('cannot pass as tracked by forging the base commit’s tree in .git/objects: git_error naming the object', async () => {
    const sb = withRepoConfig({ pair_loop: { max_rounds: 2 } })
    const evil = JSON.stringify({ pair_loop: { max_rounds: 9 } })
    const tree = gitIn(sb, ['rev-parse', 'HEAD^{tree}']).trim()
    const evilBlob = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: sb.repo, input: evil, encoding: 'utf8' })
    const listing = gitIn(sb, ['ls-tree', 'HEAD']).replace(
      /[0-9a-f]{40}(\t\.pair-loop\.json)/,
      `${evilBlob.stdout.trim()}$1`,
    )
    const forged = spawnSync('git', ['mktree'], { cwd: sb.repo, input: listing, encoding: 'utf8' }).stdout.trim()
    const forgedBytes = spawnSync('git', ['cat-file', 'tree', forged], { cwd: sb.repo }).stdout
    // the original tree's object file now holds the forged tree: git reads it without checking its hash
    const object = join(sb.repo, '.git', 'objects', tree.slice(0, 2), tree.slice(2))
    chmodSync(object, 0o644)
    writeFileSync(object, deflateSync(Buffer.concat([Buffer.from(`tree ${forgedBytes.length}\0`), forgedBytes])))
    writeFileSync(sb.configFile, evil)
    const error = expectError(await sb.cli(['start', '--task', 'x']), 'git_error')
    expect(error).toMatchObject({ object: tree, type: 'tree' })
  })
})

describe('a trusted command that runs a file in the working tree', () => {
  const REVIEW_SH = 'review.sh'
  /** review.sh, committed: notes where it runs and as what into $SEEN, then hands the prompt to a stub reviewer. */
  const reviewScript = (stub: string) =>
    `pwd > "$SEEN"\necho "$0" >> "$SEEN"\nexec sh '${join(ROOT, 'fixtures', 'reviewers', `${stub}.sh`)}'\n`
  const seenFile = (sb: { home: string }) => join(sb.home, '..', 'seen.txt')
  /** The person's config passes $SEEN to their reviewer (pair_loop.reviewer_env), beside `pairLoop`. */
  const passSeen = (sb: { home: string }, pairLoop: Record<string, unknown> = {}) =>
    writeTestHomeConfig(sb.home, { pair_loop: { ...pairLoop, reviewer_env: { SEEN: true } } })

  async function handOver(sb: ReturnType<typeof withRepoConfig>) {
    expectOk(await sb.cli(['start', '--task', 'x']))
    writeFileSync(join(sb.repo, 'a.txt'), 'b\n')
    expectOk(await sb.cli(['coder-done', '--summary', 's']))
  }

  it('records the SHA-256 of each in-tree file the config’s commands run beside the config’s own', async () => {
    const sb = withRepoConfig({ pair_loop: { reviewer_cmd: ['sh', REVIEW_SH] } }, undefined, {
      [REVIEW_SH]: reviewScript('changes'),
    })
    const script = join(sb.repo, REVIEW_SH)
    const trusted = expectOk(await sb.cli(['trust']))
    expect(trusted.programs).toEqual([{ path: script, sha256: sha256(script), trusted: true }])
    const record = JSON.parse(readFileSync(join(sb.home, 'trust.json'), 'utf8'))
    expect(record.programs[sb.repo].files).toEqual({ [script]: sha256(script) })
    writeFileSync(script, reviewScript('approve'))
    expect(expectOk(await sb.cli(['trust', '--show']))).toMatchObject({
      trusted: false,
      programs: [{ path: script, sha256: sha256(script), trusted: false }],
    })
  })

  it('runs the trusted script outside the repository, as a copy of the bytes the person trusted', async () => {
    const sb = withRepoConfig({ pair_loop: { reviewer_cmd: ['sh', REVIEW_SH] } }, undefined, {
      [REVIEW_SH]: reviewScript('changes'),
    })
    passSeen(sb)
    expectOk(await sb.cli(['trust']))
    await handOver(sb)
    const review = expectOk(await sb.cli(['review'], { env: { SEEN: seenFile(sb) } }))
    expect(review.verdict).toBe('CHANGES_REQUESTED')
    const [cwd, script] = readFileSync(seenFile(sb), 'utf8').trim().split('\n')
    for (const path of [cwd!, script!]) expect(path.startsWith(sb.home), path).toBe(true)
    expect(readFileSync(script!, 'utf8')).toBe(reviewScript('changes'))
  })

  it('refuses the script once the coder rewrote it, naming the file, and runs nothing', async () => {
    const sb = withRepoConfig({ pair_loop: { reviewer_cmd: ['sh', REVIEW_SH] } }, undefined, {
      [REVIEW_SH]: reviewScript('changes'),
    })
    passSeen(sb) // the script could say it ran: its silence means it did not
    expectOk(await sb.cli(['trust']))
    await handOver(sb)
    writeFileSync(join(sb.repo, REVIEW_SH), reviewScript('approve'))
    const error = expectError(await sb.cli(['review'], { env: { SEEN: seenFile(sb) } }), 'config_untrusted')
    expect(error).toMatchObject({ path: join(sb.repo, REVIEW_SH), keys: ['pair_loop.reviewer_cmd'] })
    expect(error.message).toContain('pair-loop trust')
    expect(existsSync(seenFile(sb))).toBe(false)
  })

  it('refuses an in-tree codex binary rewritten after the trust, before running even its --help', async () => {
    const marker = (sb: { home: string }) => join(sb.home, '..', 'ran.txt')
    const sb = withRepoConfig({ pair_loop: { codex_bin: './bin/codex' } }, undefined, { 'bin/codex': 'exit 1\n' })
    chmodSync(join(sb.repo, 'bin', 'codex'), 0o755)
    git(sb.repo, ['commit', '-qam', 'an executable codex'], sb.env)
    expectOk(await sb.cli(['trust']))
    await handOver(sb)
    writeFileSync(join(sb.repo, 'bin', 'codex'), `#!/bin/sh\necho ran > '${marker(sb)}'\n`)
    const error = expectError(await sb.cli(['review']), 'config_untrusted')
    expect(error).toMatchObject({ path: join(sb.repo, 'bin', 'codex'), keys: ['pair_loop.codex_bin'] })
    expect(existsSync(marker(sb))).toBe(false)
  })

  it('holds for the person’s own config too: an in-tree script it names runs only once trusted', async () => {
    const sb = withRepoConfig({}, undefined, { [REVIEW_SH]: reviewScript('changes') })
    passSeen(sb, { reviewer_cmd: ['sh', REVIEW_SH] })
    rmSync(sb.configFile)
    git(sb.repo, ['commit', '-qam', 'no repository config'], sb.env)
    await handOver(sb)
    const error = expectError(await sb.cli(['review'], { env: { SEEN: seenFile(sb) } }), 'config_untrusted')
    expect(error.path).toBe(join(sb.repo, REVIEW_SH))
    expect(existsSync(seenFile(sb)), 'the untrusted script ran').toBe(false)
    expect(expectOk(await sb.cli(['trust'])).programs).toEqual([
      { path: join(sb.repo, REVIEW_SH), sha256: sha256(join(sb.repo, REVIEW_SH)), trusted: true },
    ])
    expect(expectOk(await sb.cli(['review'], { env: { SEEN: seenFile(sb) } })).verdict).toBe('CHANGES_REQUESTED')
    expect(existsSync(seenFile(sb)), 'the trusted script ran').toBe(true)
  })

  it('still reads a trust record written before programs were recorded', async () => {
    const sb = withRepoConfig({ pricing: { m: { input: 1, output: 1 } } })
    const at = '2026-01-01T00:00:00.000Z'
    mkdirSync(sb.home, { recursive: true })
    writeFileSync(
      join(sb.home, 'trust.json'),
      JSON.stringify({ version: 1, trusted: { [sb.configFile]: { sha256: sha256(sb.configFile), at } } }),
    )
    expectOk(await sb.cli(['start', '--task', 'x']))
  })
})

describe('trust --show in a place that is no directory', () => {
  it('is a git_error naming what could not run, never internal, when --cwd names a file', async () => {
    const sb = sandbox()
    const file = join(sb.repo, 'README.md')
    const error = expectError(await sb.cli(['trust', '--show', '--cwd', file]), 'git_error')
    expect(error.message).toContain('ENOTDIR')
  })
})
