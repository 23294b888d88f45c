import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_CONFIG_NAME } from '../lib/config.ts'
import { configPath } from '../lib/paths.ts'
import { expectError, expectOk, runDisk } from './_expect.ts'
import { ROOT, sandbox } from './_helpers.ts'

// The repository's .pair-loop.json is part of the change under review: it may not choose or pay for its reviewer
// unless the person trusted that exact content.

const stub = (name: string) => ['sh', join(ROOT, 'fixtures', 'reviewers', `${name}.sh`)]
const writeHomeConfig = (home: string, config: unknown) => {
  mkdirSync(dirname(configPath(home)), { recursive: true })
  writeFileSync(configPath(home), JSON.stringify(config))
}
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** A sandbox whose repository commits `config` as its .pair-loop.json (and a home config, if given). */
function withRepoConfig(config: unknown, home?: unknown) {
  const sb = sandbox({ 'a.txt': 'a\n', [REPO_CONFIG_NAME]: JSON.stringify(config) })
  if (home !== undefined) writeHomeConfig(sb.home, home)
  return { ...sb, configFile: join(sb.repo, REPO_CONFIG_NAME) }
}

describe('start under a repository config', () => {
  it.each<[string, unknown, unknown]>([
    ['the agents and the round cap', { pair_loop: { coder: 'codex', reviewer: 'claude', max_rounds: 5 } }, undefined],
    [
      'the timeout, a larger diff cap and the model',
      { pair_loop: { reviewer_timeout_s: 60, max_diff_bytes: 500_000, reviewer_model: 'm' } },
      undefined,
    ],
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
