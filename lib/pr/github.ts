// GitHub's two APIs as the PR phase uses them, through the one bounded gh runner: GraphQL (the run's pinned repository
// filled in for the {owner}/{repo} placeholders by the runner, never by gh) and REST posts whose body goes through a file.
import { fail } from '../ground/errors.ts'
import { type GhTarget, ghJson, runGh, withJsonInput } from '../ground/gh.ts'

export type GraphqlVars = Record<string, string | number | null>

/** `data` of a GraphQL answer; GraphQL `errors` are `gh_error` with GitHub's message. */
export async function graphql(
  at: GhTarget,
  query: string,
  vars: GraphqlVars,
  { idempotent = true }: { idempotent?: boolean } = {},
): Promise<Record<string, unknown>> {
  const args = ['api', 'graphql', '-f', `query=${query}`]
  for (const [name, value] of Object.entries(vars)) {
    if (value === null) continue
    // -F: typed (numbers; the runner fills {owner}/{repo} as strings); -f keeps a cursor or id a string
    if (typeof value === 'number' || value === '{owner}' || value === '{repo}') args.push('-F', `${name}=${value}`)
    else args.push('-f', `${name}=${value}`)
  }
  const operation = /^(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'graphql'
  const answer = ghJson(await runGh(args, { at, idempotent }), `api graphql ${operation}`) as {
    data?: Record<string, unknown> | null
    errors?: Array<{ message?: string; type?: string }>
  }
  if (answer.errors?.length || !answer.data)
    fail('gh_error', `GitHub answered ${operation} with an error: ${answer.errors?.[0]?.message ?? 'no data'}`, {
      operation,
      errors: answer.errors ?? [],
      // GitHub's answer, not a failure to reach it: asking again gets the same, unless it was its rate limit
      retryable: (answer.errors ?? []).some((error) => error.type === 'RATE_LIMITED'),
    })
  return answer.data
}

/** A POST to the REST API with a JSON body from a file; the created object. */
export async function postRest(at: GhTarget, endpoint: string, payload: unknown): Promise<Record<string, unknown>> {
  const out = await withJsonInput(payload, (file) =>
    runGh(['api', '--method', 'POST', endpoint, '--input', file], { at, idempotent: false }),
  )
  const created = ghJson(out, `api ${endpoint}`)
  if (typeof created !== 'object' || created === null)
    fail('gh_error', `gh api ${endpoint} answered no object`, { stdout: out.slice(0, 2000) })
  return created as Record<string, unknown>
}

/** The number the REST API gave an object, and its web URL. */
export function createdRef(created: Record<string, unknown>, what: string): { id: number; url: string } {
  if (typeof created.id !== 'number' || typeof created.html_url !== 'string')
    fail('gh_error', `GitHub's answer for the ${what} carries no id and html_url`, {
      answer: JSON.stringify(created).slice(0, 2000),
    })
  return { id: created.id, url: created.html_url }
}
