// findings: the run's findings with their replies, or as SARIF 2.1.0 / reviewdog rdjsonl for other tools (printed as
// they are, not as a pair-loop document).
import { type RawOutput, rawOutput } from '../ground/document.ts'
import type { Context } from '../ground/context.ts'
import { toRdjsonl } from '../export/rdjsonl.ts'
import { toSarif } from '../export/sarif.ts'
import { packageRoot, projectUrl } from '../ground/package.ts'
import { resolveRun } from '../run/run-access.ts'
import { allFindings } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'

export const FORMATS = ['json', 'sarif', 'rdjsonl'] as const

export interface FindingsOptions {
  run?: string
  cwd?: string
  format: (typeof FORMATS)[number]
}

export async function run(ctx: Context, options: FindingsOptions) {
  const run = resolveRun(options, { allowFinished: true })
  if (options.format === 'sarif') return rawOutput(JSON.stringify(toSarif(run, packageInfo())))
  if (options.format === 'rdjsonl') {
    const { text, skipped } = toRdjsonl(run, packageInfo().informationUri)
    if (skipped.length)
      ctx.io.stderr(`pair-loop findings: ${skipped.length} finding(s) without a path skipped: ${skipped.join(', ')}\n`)
    return { raw: text } satisfies RawOutput // no findings: nothing at all, not an empty line
  }
  return findingsDocument(run)
}

function findingsDocument(run: RunState) {
  const latest = run.rounds.findLast((round) => round.reviewer)?.reviewer ?? null
  return {
    run_id: run.run_id,
    verdict: latest?.verdict ?? null,
    findings: allFindings(run).map((finding) => {
      const reply = run.replies[finding.id]
      return {
        ...finding,
        reply: reply
          ? { disposition: reply.disposition, body: reply.body, at: reply.at, comment_url: reply.comment_url ?? null }
          : null,
        status: reply ? 'answered' : 'open',
      }
    }),
  }
}

/** The package's own version and web page (none unless package.json names one), from its package.json. */
function packageInfo(): { version: string; informationUri: string | null } {
  const json = packageRoot()?.json
  return { version: json?.version ?? '0.0.0', informationUri: projectUrl(json) }
}
