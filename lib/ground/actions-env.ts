// What a GitHub Actions step is given and gives back: the event file (GITHUB_EVENT_PATH), the repository, the inputs
// (INPUT_<NAME>, as GitHub names them for an action), the outputs file (GITHUB_OUTPUT) and the job summary
// (GITHUB_STEP_SUMMARY). Outputs are written in GitHub's multiline form with a delimiter their value cannot hold.
import { randomBytes } from 'node:crypto'
import { appendFileSync, readFileSync } from 'node:fs'
import { fail } from './errors.ts'
import type { GhTarget } from './gh.ts'

type Env = Readonly<NodeJS.ProcessEnv>

/** An action input as GitHub passes it (`INPUT_REQUIRE_REVIEWERS` for `require_reviewers`), trimmed; unset: undefined. */
export function actionInput(env: Env, name: string): string | undefined {
  const value = env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`]?.trim()
  return value ? value : undefined
}

export interface PullRequestEvent {
  repository: string
  number: number
}

/** The PR this run is for, from the event file; anything but a pull_request event is `usage`. */
export function pullRequestEvent(env: Env): PullRequestEvent {
  const repository = env.GITHUB_REPOSITORY ?? ''
  if (!/^[\w.-]+\/[\w.-]+$/.test(repository))
    fail('usage', 'GITHUB_REPOSITORY is not set to owner/repo: run this in a GitHub Actions job', {
      variable: 'GITHUB_REPOSITORY',
    })
  const path = env.GITHUB_EVENT_PATH
  if (!path)
    fail('usage', 'GITHUB_EVENT_PATH is not set: run this in a GitHub Actions job', { variable: 'GITHUB_EVENT_PATH' })
  let event: { pull_request?: { number?: unknown } }
  try {
    event = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    fail('usage', `cannot read the event file ${path}: ${(error as Error).message}`, { variable: 'GITHUB_EVENT_PATH' })
  }
  const number = event?.pull_request?.number
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1)
    fail('usage', `the event file ${path} is not a pull_request event: run the action on pull_request`, {
      variable: 'GITHUB_EVENT_PATH',
    })
  return { repository, number }
}

/** Each output appended to GITHUB_OUTPUT as `name<<DELIM`, the value, `DELIM` (nothing when the variable is unset). */
export function setOutputs(env: Env, outputs: Record<string, string>): void {
  const file = env.GITHUB_OUTPUT
  if (!file) return
  const lines = Object.entries(outputs).map(([name, value]) => {
    let delimiter = `pair_loop_${randomBytes(8).toString('hex')}`
    while (value.includes(delimiter)) delimiter = `pair_loop_${randomBytes(8).toString('hex')}`
    return `${name}<<${delimiter}\n${value}\n${delimiter}\n`
  })
  appendFileSync(file, lines.join(''))
}

/** Markdown appended to the job summary (the Actions tab shows it), when the job has one. */
export function appendSummary(env: Env, markdown: string): void {
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${markdown.trimEnd()}\n`)
}

/** Where the job's gh calls run, and the repository they name: the event's (GITHUB_REPOSITORY on GITHUB_SERVER_URL). */
export function jobTarget(env: Env, cwd: string, repository: string): GhTarget {
  const host = URL.canParse(env.GITHUB_SERVER_URL ?? '') ? new URL(env.GITHUB_SERVER_URL!).host : 'github.com'
  return { cwd, github: { host, repo: repository } }
}
