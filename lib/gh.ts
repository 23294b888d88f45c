// GitHub through `gh`: create the run's PR once, post a reply as a PR comment once. Bodies go through files, never argv.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fail } from './errors.ts'
import { exec } from './exec.ts'
import { firstLineOf } from './text.ts'

export const ghBin = () => process.env.PAIR_LOOP_GH || 'gh'

async function gh(args: string[], cwd: string): Promise<string> {
  const result = await exec(ghBin(), args, { cwd, timeoutMs: 120_000 })
  if (!result.ok) {
    const missing = result.exitCode === 127 // bash's 'command not found'
    const said =
      firstLineOf(result.stderr) ||
      firstLineOf(result.stdout) ||
      (result.exitCode === null ? 'did not finish in time' : `exit ${result.exitCode}`)
    fail(
      'gh_error',
      missing
        ? `gh is not installed or not on PATH (${said})`
        : `gh ${args[0]} ${args[1] ?? ''} failed: ${said}`.replace(/\s+/g, ' '),
      {
        gh_args: args.filter((arg) => !arg.startsWith('body=')),
        exit: result.exitCode,
        stderr: result.stderr.slice(0, 2000),
      },
    )
  }
  return result.stdout
}

export interface CreatedPr {
  number: number
  url: string
}

export async function createPr(
  cwd: string,
  options: { title: string; bodyFile: string; base: string | null; head: string | null; draft: boolean },
): Promise<CreatedPr> {
  const args = ['pr', 'create', '--title', options.title, '--body-file', options.bodyFile]
  if (options.base) args.push('--base', options.base)
  if (options.head) args.push('--head', options.head)
  if (options.draft) args.push('--draft')
  const out = await gh(args, cwd)
  const url = out
    .split('\n')
    .map((line) => line.trim())
    .find((line) => /\/pull\/\d+/.test(line))
  if (!url)
    fail('gh_error', `gh pr create did not print a PR URL (got ${JSON.stringify(firstLineOf(out))})`, {
      stdout: out.slice(0, 2000),
    })
  return { number: Number(/\/pull\/(\d+)/.exec(url)![1]), url }
}

/** A comment on the PR's conversation; returns its URL. */
export async function commentOnPr(cwd: string, pr: number, body: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'pair-loop-gh-'))
  const bodyFile = join(dir, 'body.md')
  try {
    writeFileSync(bodyFile, body)
    const out = await gh(
      ['api', '--method', 'POST', `repos/{owner}/{repo}/issues/${pr}/comments`, '-F', `body=@${bodyFile}`],
      cwd,
    )
    let url: unknown
    try {
      url = (JSON.parse(out) as { html_url?: unknown }).html_url
    } catch {}
    if (typeof url !== 'string')
      fail('gh_error', `gh api did not return the comment's html_url (got ${JSON.stringify(firstLineOf(out))})`, {
        stdout: out.slice(0, 2000),
      })
    return url
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
